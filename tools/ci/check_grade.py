#!/usr/bin/env python3
"""Checks a grader run's results.json against what it should say (used by tools/ci/run_tests.sh).

    check_grade.py results.json --full 1 3 --zero 1 3 --reason "not implemented" --not-available 2 4
--full: these tasks at full marks; --zero: these tasks score 0, every case failing with --reason in
it; --not-available / --not-run: tasks in that state. Exits 1 with the first few problems.
"""
import argparse
import json
import sys
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    for opt in ("--full", "--zero", "--not-available", "--not-run"):
        ap.add_argument(opt, type=int, nargs="*", default=[])
    ap.add_argument("--reason", default="")
    a = ap.parse_args()
    with open(a.results) as f:
        tests = json.load(f)["tests"]
    by_task = defaultdict(list)
    for t in tests:
        by_task[t["extra_data"]["task"]].append(t)
    problems = []
    for task in a.full:
        for t in by_task[task] or [{"name": f"task {task}", "score": 0, "max_score": 1, "output": "missing"}]:
            if t["score"] < t["max_score"] - 1e-9:
                problems.append(f"{t['name']}: expected full marks, got {t['score']:.2f}: {t['output'].strip()[:200]}")
    for task in a.zero:
        for t in by_task[task]:
            # a performance row of a task whose cases failed says "not measured", not the cases' reason
            reason_needed = t["extra_data"].get("state") != "performance"
            if t["score"] > 0 or (reason_needed and a.reason not in t["output"]):
                problems.append(f"{t['name']}: expected 0 and '{a.reason}', got {t['score']:.2f}: {t['output'].strip()[:200]}")
    for state, tasks in (("not available", a.not_available), ("not run", a.not_run)):
        for task in tasks:
            states = {t["extra_data"]["state"] for t in by_task[task]}
            if states != {state}:
                problems.append(f"task {task}: expected '{state}', got {sorted(states)}")
    for p in problems[:10]:
        print("  " + p)
    print(f"check_grade: {a.results}: {'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
