#!/usr/bin/env python3
"""The kit's docs/grader.md and docs/perf.md (tools/kit/make_release.sh): course staff's records stay out of the kit.

    tools/kit/kit_docs.py KIT_DIR

docs/grader.md goes in without the sections that are staff records or staff tools — the attacks tried and what
catches each, the negative controls, the logs of the GPU runs, the grader's known limits, class grading — named in
STAFF_SECTIONS; what the grader checks, and the failures it names, stay. docs/perf.md, the staff's log of every
measured figure (raw numbers, dates, commands, runs), is replaced by tools/kit/kit_perf.md, which says where the
figures a README quotes come from and how a student measures their own.
"""
import os
import re
import shutil
import sys

STAFF_SECTIONS = ("Threat model", "Negative controls", "Runs", "Known limits",
                  "A whole class: batch grading, Slurm, Gradescope, the student kit")


def without_sections(text, titles):
    """`text` with every level-2 section (## Title, up to the next ## or the end) whose title is in `titles` removed;
    their ### subsections go with them. Raises if a title is missing (the list went stale)."""
    parts = re.split(r"(?m)^(?=## )", text)
    kept, found = [], set()
    for part in parts:
        title = part[3:].split("\n", 1)[0].strip() if part.startswith("## ") else None
        if title in titles:
            found.add(title)
            continue
        kept.append(part)
    missing = set(titles) - found
    if missing:
        raise SystemExit(f"kit_docs: docs/grader.md has no section {sorted(missing)} (update STAFF_SECTIONS)")
    return "".join(kept)


def main():
    kit = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(kit, "docs", "grader.md")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(without_sections(text, STAFF_SECTIONS))
    shutil.copy(os.path.join(here, "kit_perf.md"), os.path.join(kit, "docs", "perf.md"))


if __name__ == "__main__":
    main()
