#!/usr/bin/env python3
"""No solution code in the student kit: none of the reference's distinctive solution lines is in any kit file.

    tools/kit/check_solution_lines.py KIT

A solution line is one that `unifdef -DSOLUTION=1` keeps and `unifdef -USOLUTION` drops from a reference file
(taskN/reference/*), stripped of its indent, 20 characters or more. It is distinctive when no other tracked file
holds it (the ladders, controls and the reference itself copy solution lines: they do not make a line a shared
idiom). Each distinctive line is looked for in every file of the kit. Run by tools/kit/check_release.sh.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOT_SHARED = re.compile(r"^task[0-9]+(_[a-z0-9]+)*/(reference|controls|ladder)/|^grader/controls/")


def unifdef(flag, path):
    p = subprocess.run(["unifdef", flag, path], cwd=ROOT, capture_output=True)
    if p.returncode > 1:
        sys.exit(f"check-release: unifdef {flag} {path} failed: {p.stderr.decode(errors='replace')}")
    return p.stdout.splitlines()


def solution_lines(path):
    """Lines of `path` that only the solution has (a line kept by both sides is no fingerprint)."""
    without = set(unifdef("-USOLUTION", path))
    return [line.lstrip() for line in unifdef("-DSOLUTION=1", path) if line not in without and len(line.lstrip()) >= 20]


def contents(paths):
    """All the files' bytes, one blob, files apart by a NUL (no line spans two files)."""
    out = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                out.append(f.read())
        except OSError:
            pass
    return b"\0".join(out)


def main():
    kit = sys.argv[1]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\n")
    shared = contents(os.path.join(ROOT, p) for p in tracked if p and not NOT_SHARED.search(p))
    in_kit = contents(os.path.join(d, f) for d, _, files in os.walk(kit) for f in files)
    references = sorted(p for p in tracked if re.match(r"^task[0-9]+(_[a-z0-9]+)*/reference/", p))
    checked = leaks = 0
    for ref in references:
        for line in dict.fromkeys(solution_lines(ref)):  # once each, in order
            if line in shared:
                continue  # a shared idiom, not a fingerprint of the solution
            checked += 1
            if line in in_kit:
                print(f"  leak from {ref}: {line.decode(errors='replace')}")
                leaks += 1
    if leaks:
        sys.exit(f"check-release: {leaks} solution lines found in the kit")
    if checked <= 100:
        sys.exit(f"check-release: only {checked} solution lines were checked: the check is not looking")
    n = sum(len(files) for _, _, files in os.walk(kit))
    print(f"check-release: none of {checked} distinctive solution lines is in the kit ({n} files)")


if __name__ == "__main__":
    main()
