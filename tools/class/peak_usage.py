#!/usr/bin/env python3
"""Runs a command and reports its peak memory and the peak size of a folder while it ran:

    tools/class/peak_usage.py --folder OUT [--report FILE] -- COMMAND ARG…

Every half second it sums the resident memory of the command's whole process tree (children in other sessions too:
class grading starts each build and grade in a session of its own) and measures the folder's size on disk (allocated
blocks: a sparse file counts as what it holds). Prints "peak memory N MB, peak disk N MB" (also to --report as JSON)
and exits with the command's exit code. Used by tools/class/check_batch.sh for the sample class's bound.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def tree(root):
    """root and every process descended from it (from /proc)."""
    children = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(pid))
            except (OSError, ValueError, IndexError):
                continue
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_mb(pids):
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total / 2**20


def disk_mb(folder):
    total = 0
    for d, _, files in os.walk(folder):
        for n in files:
            try:
                total += os.lstat(os.path.join(d, n)).st_blocks * 512
            except OSError:
                continue
    return total / 2**20


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", required=True)
    ap.add_argument("--report")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    p = subprocess.Popen(cmd)
    peak_mem = peak_disk = 0.0
    while p.poll() is None:
        peak_mem = max(peak_mem, rss_mb(tree(p.pid)))
        peak_disk = max(peak_disk, disk_mb(a.folder))
        time.sleep(0.5)
    peak_disk = max(peak_disk, disk_mb(a.folder))
    line = f"peak memory {peak_mem:.0f} MB, peak disk {peak_disk:.0f} MB"
    print(line, file=sys.stderr)
    if a.report:
        with open(a.report, "w") as f:
            json.dump({"peak_memory_mb": round(peak_mem), "peak_disk_mb": round(peak_disk)}, f)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
