#!/usr/bin/env python3
"""The class report's speed parts without a GPU: two students graded twice on a recorded H100 run
(tools/pictures/testdata/results_h100.json, every timed shape of Tasks 2, 4 and 5). Student `steady` keeps the
recorded times; `jumper` is 3× the reference's time at the first grading and half of it at the second. Checks: the
leaderboard of each timed shape ranks them with the reference's line; `jumper` gets the speed-jump flag on both pages
and in the history, `steady` none; each page passes the browser check (tools/class/check_report.py).

    tools/class/test_class_report.py        (run by tools/class/check_batch.sh)
"""
import copy
import csv
import html
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import class_report  # noqa: E402

FIXTURE = os.path.join(ROOT, "tools/pictures/testdata/results_h100.json")


def results_at(scale):
    """The recorded run with every timed shape at `scale` × the reference's time."""
    res = copy.deepcopy(json.load(open(FIXTURE)))
    for t in res["tests"]:
        x = t["extra_data"]
        if x.get("state") == "performance" and x.get("reference_ms", -1) > 0:
            x["ms"] = x["reference_ms"] * scale
            x["tflops"] = x.get("flops", 0) / (x["ms"] * 1e9) if x.get("flops") else x.get("tflops", 0)
            x["gbps"] = x.get("bytes", 0) / (x["ms"] * 1e6) if x.get("bytes") else x.get("gbps", 0)
    return res


def grade(out, scales, when):
    rows = []
    for student, scale in scales.items():
        os.makedirs(os.path.join(out, student), exist_ok=True)
        with open(os.path.join(out, student, "results.json"), "w") as f:
            json.dump(results_at(scale), f)
        rows.append({"student": student, "task2": "3.0", "task4": "4.0", "task5": "4.0", "total": "11.0", "flags": "",
                     "sandbox": "bubblewrap", "gpu": "GPU 0: NVIDIA H100 80GB HBM3"})
    with open(os.path.join(out, "gradebook.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    class_report.write_report(out, when=when)


def main():
    bad = []
    with tempfile.TemporaryDirectory() as out:
        grade(out, {"steady": 1.0, "jumper": 3.0}, "2026-01-01 09:00 UTC")
        grade(out, {"steady": 1.0, "jumper": 0.5}, "2026-01-08 09:00 UTC")
        index, jumper, steady = (html.unescape(open(os.path.join(out, "report", p)).read())
                                 for p in ("index.html", "students/jumper.html", "students/steady.html"))
        history = [json.loads(line) for line in open(os.path.join(out, "history.jsonl"))]
        shapes = [t["name"] for t in json.load(open(FIXTURE))["tests"] if t["extra_data"].get("state") == "performance"]
        if index.count("<h3>Task ") != len(shapes):
            bad.append(f"{index.count('<h3>Task ')} leaderboards for {len(shapes)} timed shapes")
        if "the reference (median of its times)" not in index:
            bad.append("the leaderboards lack the reference's line")
        if "speed jump on Task 4: 3.00× the reference's time at the previous grading, 0.50× now" not in jumper:
            bad.append("jumper's page lacks the speed-jump flag")
        if "speed jump" in steady or "jumper" in steady:
            bad.append("steady's page shows a jump, or the other student")
        if "speed jump on Task" not in index:
            bad.append("the class page does not list the speed jump among the flagged")
        jumps = {h["student"]: h["jumps"] for h in history if h["when"].startswith("2026-01-08")}
        if not jumps.get("jumper") or jumps.get("steady"):
            bad.append(f"the history's jumps: {jumps}")
        if "1 of 2" not in jumper:
            bad.append("jumper's page does not give its rank among the class")
        browser = subprocess.run([sys.executable, os.path.join(HERE, "check_report.py"), out], capture_output=True, text=True)
        if browser.returncode != 0:
            bad.append("the browser check: " + browser.stdout[-800:])
    print("\n".join(bad) or f"test-class-report: {len(shapes)} leaderboards, the speed jump flagged for the jumper only, "
                            f"the pages pass the browser check")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
