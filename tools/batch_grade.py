#!/usr/bin/env python3
"""Grades a whole class: every submission in its own tree, built and graded in isolation.

    tools/batch_grade.py --submissions DIR [--out DIR] [--timeout S]       grade all here, in turn
    tools/batch_grade.py --submissions DIR --slurm [--gres gpu:h100:1] …   write a Slurm job array
    tools/batch_grade.py --submissions DIR --index I                        one submission (an array task)
    tools/batch_grade.py --collect --out DIR                                merge results into the gradebook

A submission is a folder or a .tar.gz in DIR, named after the student, holding the kit's layout
(at least taskN/skeleton/* files). Each is graded in OUT/<student>/tree: the course's tree (this
checkout: harness, tests, grader, goldens) with the student's taskN/skeleton/ files copied over it,
built with `make IMPL=skeleton`, graded with the course's rubric, the reference's benchmarks as the
performance yardstick, and the student's own whole tree checked for edited harness files. One
submission that does not build, crashes or hangs costs only its own row of OUT/gradebook.csv.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAFF_ONLY = ("reference", "controls")


def submissions(directory):
    names = []
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if os.path.isdir(path) or entry.endswith((".tar.gz", ".tgz")):
            names.append((entry.split(".")[0], path))
    return names


def unpack(path, dest):
    """The submission as a tree: a copy of the folder, or the tarball extracted (safely)."""
    shutil.rmtree(dest, ignore_errors=True)
    if os.path.isdir(path):
        shutil.copytree(path, dest, symlinks=False)
        return dest
    os.makedirs(dest)
    with tarfile.open(path) as tar:
        # plain files and folders only, and nothing outside dest (no absolute paths, no '..', no links)
        safe = [m for m in tar.getmembers() if (m.isfile() or m.isdir()) and not os.path.isabs(m.name)
                and ".." not in m.name.split("/")]
        tar.extractall(dest, members=safe)
    inner = [d for d in os.listdir(dest) if os.path.isdir(os.path.join(dest, d))]
    return os.path.join(dest, inner[0]) if len(inner) == 1 and not os.path.isdir(os.path.join(dest, "task1")) else dest


def course_tree(dest):
    """The course's files (tracked, without reference solutions and controls) plus its goldens."""
    shutil.rmtree(dest, ignore_errors=True)
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if any(f"/{s}/" in f for s in STAFF_ONLY):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dest, f))
    if os.path.isdir(os.path.join(ROOT, "goldens")):
        shutil.copytree(os.path.join(ROOT, "goldens"), os.path.join(dest, "goldens"))


def grade_one(name, path, out, timeout):
    """Builds and grades one submission; returns its row for the gradebook (also OUT/<name>/row.json)."""
    work = os.path.join(out, name)
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "grade.log"), "w") as log:
        row = build_and_grade(name, path, work, timeout, log)
    with open(os.path.join(work, "row.json"), "w") as f:
        json.dump(row, f)
    return row


def build_and_grade(name, path, work, timeout, log):
    row = {"student": name, "total": 0.0, "flags": ""}
    try:
        submitted = unpack(path, os.path.join(work, "submitted"))
        tree = os.path.join(work, "tree")
        course_tree(tree)
        copied = 0
        for task in sorted(d for d in os.listdir(submitted) if d.startswith("task")):
            src = os.path.join(submitted, task, "skeleton")
            if os.path.isdir(src) and os.path.isdir(os.path.join(tree, task, "skeleton")):  # Task 7 has no student files
                for f in os.listdir(src):
                    shutil.copy2(os.path.join(src, f), os.path.join(tree, task, "skeleton", f))
                    copied += 1
        if copied == 0:
            row["flags"] = "no taskN/skeleton files in the submission"
            return row
        b = subprocess.run(["make", "--no-print-directory", "-j2", "IMPL=skeleton", "build/skeleton/bin/grader"], cwd=tree,
                           stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
        if b.returncode != 0:
            row["flags"] = "does not build (see grade.log)"
            return row
        cmd = ["./build/skeleton/bin/grader", "--out", os.path.abspath(work), "--impl", name, "--root", os.path.abspath(submitted),
               "--reference-bin-dir", os.path.join(ROOT, "build/reference/bin")]
        for task in sorted(t for t in os.listdir(tree) if t.startswith("task")):
            if not os.path.isdir(os.path.join(tree, task, "skeleton")):
                continue
            sources = os.listdir(os.path.join(tree, task, "skeleton"))
            objs = [os.path.join("build/skeleton", task, "skeleton", os.path.splitext(f)[0] + ".o") for f in sources]
            cmd += ["--objects", f"{task[4:]}={','.join(objs)}"]
        g = subprocess.run(cmd, cwd=tree, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, start_new_session=True)
        if g.returncode != 0:
            row["flags"] = f"grader exited {g.returncode}"
            return row
        return summarise(name, work)
    except subprocess.TimeoutExpired:
        row["flags"] = f"timed out after {timeout} s"
        return row
    except (OSError, tarfile.TarError, shutil.Error) as e:
        row["flags"] = f"unreadable submission: {e}"
        return row


def summarise(name, work):
    with open(os.path.join(work, "results.json")) as f:
        res = json.load(f)
    row = {"student": name, "total": round(res["score"], 2), "flags": ""}
    flags = []
    if res["extra_data"].get("edited_files"):
        flags.append("harness edited: " + " ".join(res["extra_data"]["edited_files"]))
    for t in res["tests"]:
        task = f"task{t['extra_data']['task']}"
        if task == "task0":
            continue
        row[task] = row.get(task, 0.0) + t["score"]
        for fl in t["extra_data"].get("flags", []) or []:
            if fl not in flags:
                flags.append(fl)
    zeroed = res["extra_data"].get("edited_files") and res["score"] == 0  # the rubric zeroes an edited harness
    for key in row:
        if key.startswith("task"):
            row[key] = 0.0 if zeroed else round(row[key], 2)
    row["flags"] = "; ".join(flags)
    return row


def write_gradebook(out, rows):
    tasks = sorted({k for r in rows for k in r if k.startswith("task")}, key=lambda k: int(k[4:]))
    path = os.path.join(out, "gradebook.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["student"] + tasks + ["total", "flags"], restval=0.0)
        w.writeheader()
        for r in sorted(rows, key=lambda r: r["student"]):
            w.writerow(r)
    print(f"gradebook: {path} ({len(rows)} students)")


def write_slurm(args, subs):
    script = os.path.join(args.out, "grade_array.sbatch")
    me = os.path.abspath(__file__)
    with open(script, "w") as f:
        f.write(f"""#!/bin/bash
#SBATCH --job-name=attnlab-grade
#SBATCH --array=0-{len(subs) - 1}
#SBATCH --gres={args.gres}
#SBATCH --cpus-per-task={args.cpus}
#SBATCH --mem={args.mem}
#SBATCH --time={args.time}
#SBATCH --output={os.path.abspath(args.out)}/slurm-%A_%a.log
# One submission per array task; afterwards: {me} --collect --out {os.path.abspath(args.out)}
set -euo pipefail
cd {ROOT}
/usr/bin/python3 {me} --submissions {os.path.abspath(args.submissions)} --out {os.path.abspath(args.out)} --index "$SLURM_ARRAY_TASK_ID"
""")
    os.chmod(script, 0o755)
    print(f"slurm: wrote {script} ({len(subs)} array tasks); submit it with sbatch, then --collect")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--submissions")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/batch"))
    ap.add_argument("--timeout", type=int, default=3600, help="seconds to build, and to grade, one submission")
    ap.add_argument("--index", type=int, help="grade only the I-th submission (a Slurm array task)")
    ap.add_argument("--collect", action="store_true", help="merge OUT/*/row.json into OUT/gradebook.csv")
    ap.add_argument("--slurm", action="store_true", help="write a Slurm job array instead of grading here")
    ap.add_argument("--gres", default="gpu:h100:1")
    ap.add_argument("--cpus", default="8")
    ap.add_argument("--mem", default="64G")
    ap.add_argument("--time", default="02:00:00")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.collect:
        rows = []
        for d in sorted(os.listdir(args.out)):
            p = os.path.join(args.out, d, "row.json")
            if os.path.exists(p):
                rows.append(json.load(open(p)))
        write_gradebook(args.out, rows)
        return 0
    if not args.submissions:
        ap.error("--submissions DIR is needed")
    subs = submissions(args.submissions)
    if args.slurm:
        write_slurm(args, subs)
        return 0
    chosen = [subs[args.index]] if args.index is not None else subs
    rows = []
    for name, path in chosen:
        row = grade_one(name, path, args.out, args.timeout)
        print(f"  {name:<24} {row['total']:6.2f}  {row['flags']}", flush=True)
        rows.append(row)
    if args.index is None:
        write_gradebook(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
