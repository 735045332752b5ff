#!/usr/bin/env python3
"""No solution code in the student kit: none of the reference's distinctive solution lines, and none of the distinctive
lines of the oracles the kit ships compiled, is in any kit file.

    tools/kit/check_solution_lines.py KIT

A solution line is one that `unifdef -DSOLUTION=1` keeps and `unifdef -USOLUTION` drops from a reference file
(taskN/reference/*), stripped of its indent, 20 characters or more. An oracle line is any such line of a harness source
the kit ships compiled (tools/kit/compiled_only.txt: its code would answer a task). Either is distinctive when no other
tracked file holds it (the ladders, controls and the reference itself copy solution lines: they do not make a line a
shared idiom). Each distinctive line is looked for in every file of the kit, objects included. Run by
tools/kit/check_release.sh.
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


def compiled_only():
    """The harness sources the kit ships compiled (tools/kit/compiled_only.txt, the first word of each line)."""
    with open(os.path.join(ROOT, "tools/kit/compiled_only.txt")) as f:
        return [line.split()[0] for line in f if line.strip() and not line.lstrip().startswith("#")]


def oracle_lines(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return [line.strip() for line in f.read().splitlines() if len(line.strip()) >= 20]


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
    oracles = compiled_only()
    shared = contents(os.path.join(ROOT, p) for p in tracked if p and not NOT_SHARED.search(p) and p not in oracles)
    in_kit = contents(os.path.join(d, f) for d, _, files in os.walk(kit) for f in files)
    references = sorted(p for p in tracked if re.match(r"^task[0-9]+(_[a-z0-9]+)*/reference/", p))
    counts = {"solution": 0, "oracle": 0}
    leaks = 0
    sources = [(ref, "solution", solution_lines(ref)) for ref in references]
    sources += [(src, "oracle", oracle_lines(src)) for src in oracles]
    for path, kind, lines in sources:
        for line in dict.fromkeys(lines):  # once each, in order
            if line in shared:
                continue  # a shared idiom, not a fingerprint of the solution
            counts[kind] += 1
            if line in in_kit:
                print(f"  leak from {path}: {line.decode(errors='replace')}")
                leaks += 1
    if leaks:
        sys.exit(f"check-release: {leaks} solution or oracle lines found in the kit")
    if counts["solution"] <= 100 or counts["oracle"] <= 50:
        sys.exit(f"check-release: only {counts['solution']} solution and {counts['oracle']} oracle lines were checked: "
                 "the check is not looking")
    n = sum(len(files) for _, _, files in os.walk(kit))
    print(f"check-release: none of {counts['solution']} distinctive solution lines and {counts['oracle']} lines of the "
          f"oracles shipped compiled is in the kit ({n} files)")


if __name__ == "__main__":
    main()
