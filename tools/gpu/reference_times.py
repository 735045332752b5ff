#!/usr/bin/env python3
"""Measures the reference's times at the graded shapes of Tasks 4 and 5, and of every bonus part the
rubric gives speed credit (5b: "task5b"), on this machine's GPU with the grader's own timing (grader
--perf-only, the reference's runners as the submission, nothing to compare with) and writes them into
grader/reference_times.json under the GPU's name, with the date and the command. The student kit
ships that file: its `make grade` estimates speed credit from it.

    make reference-times            (on a GPU, course repo: needs build/reference)
    tools/gpu/reference_times.py [--grader build/reference/bin/grader] [--bin-dir build/reference/bin] [--file F] [--part 4d]

--part P times that bonus part alone and replaces its key ("task4d") for this GPU, keeping the other keys and saying the
part's date beside the GPU's. A shape the grader could not time (a runner that did not start: run it where
tools/gpu/gpu_session.sh runs, with the runners' sandbox) stops it, named with the grader's reason; nothing is written.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def grader_results(cmd):
    """Runs the grader (its --out a fresh folder); its results.json, or the exit, kept folder named, when it timed
    nothing or left a shape untimed (a runner that did not start: each shape's ms 0, a failed call). A shape the grader
    could not time is not a time of 0."""
    out = tempfile.mkdtemp(prefix="reference-times-")
    p = subprocess.run([*cmd, "--out", out], cwd=ROOT, capture_output=True, text=True)
    try:
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
    except (OSError, ValueError):
        results = None
    if p.returncode != 0 or results is None or any(t["extra_data"]["state"] == "not run" for t in results["tests"]):
        print(p.stdout[-2000:], p.stderr[-2000:])
        sys.exit(f"reference_times: the grader could not time the reference here ({' '.join(cmd)}; grader output in {out})")
    for t in results["tests"]:
        e = t["extra_data"]
        if e.get("state") == "performance" and (not e.get("ms", 0) > 0 or e.get("failed_calls")):
            sys.exit(f"reference_times: {t['name']}: not timed ({e.get('reason') or 'no time'}; grader output in {out})")
    shutil.rmtree(out)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grader", default="build/reference/bin/grader")
    ap.add_argument("--bin-dir", default="build/reference/bin")
    ap.add_argument("--file", default="grader/reference_times.json")
    ap.add_argument("--part", help="time this bonus part alone and replace only its times")
    args = ap.parse_args()
    with open(os.path.join(ROOT, "grader", "rubric.json")) as f:
        timed_parts = [b["bonus"] for b in json.load(f).get("bonus", []) if b.get("performance", {}).get("share", 0) > 0]
    if args.part and args.part not in timed_parts:
        sys.exit(f"reference_times: --part {args.part}: not a bonus part with speed credit ({', '.join(timed_parts)})")
    gpu, times = "", {}
    # The tasks in one grader run, then each timed bonus part alone (grader --part: a part's timing, keyed "task5b").
    runs = [("", ["--task", "4", "--task", "5"])] + [(part, ["--part", part]) for part in timed_parts]
    for key, selection in [r for r in runs if r[0] == args.part] if args.part else runs:
        cmd = [args.grader, *selection, "--perf-only", "--bin-dir", args.bin_dir, "--reference-bin-dir", "", "--impl", "reference"]
        results = grader_results(cmd)
        gpu = gpu or results["extra_data"].get("gpu", "")
        for t in results["tests"]:
            e = t["extra_data"]
            if e.get("state") != "performance":
                continue
            shape = t["name"].split(": performance ", 1)[1]
            times.setdefault(f"task{key or e['task']}", {})[shape] = round(e["ms"], 4)
    if not gpu or not times:
        sys.exit("reference_times: no GPU name or no timed shape in the grader's results")
    path = os.path.join(ROOT, args.file)
    with open(path) as f:
        doc = json.load(f)
    today = datetime.date.today().isoformat()
    entry = doc.setdefault("gpus", {}).get(gpu) if args.part else None
    if entry:  # one part's times into what this GPU has
        entry["measured"] = re.sub(f"; task{args.part} [0-9-]+", "", entry["measured"]) + f"; task{args.part} {today}"
        entry.update(times)
    else:
        doc["gpus"][gpu] = {
            "measured": today,
            "how": "tools/gpu/reference_times.py: grader --perf-only, the reference's runners, median of the grader's timed calls",
            **times,
        }
    with open(path, "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"reference_times: {gpu}: " + ", ".join(f"{k} {len(v)} shapes" for k, v in times.items()) + f" → {args.file}")


if __name__ == "__main__":
    main()
