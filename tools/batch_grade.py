#!/usr/bin/env python3
"""Grades a whole class: every submission built in a clean tree of its own, in a sandbox, and
graded by the course's own grader.

    tools/batch_grade.py --submissions DIR [--out DIR] [--timeout S]       grade all here, in turn
    tools/batch_grade.py --submissions DIR --slurm [--gres gpu:h100:1] …   write a Slurm job array
    tools/batch_grade.py --submissions DIR --index I                        one submission (an array task)
    tools/batch_grade.py --collect --out DIR                                merge results into the gradebook
    … [--tasks 4,5] [--build-only | --grade-only]   grade some tasks; build here, grade on a GPU node later

A submission is a folder or a .tar.gz in DIR, named after the student, holding the kit's layout
(at least taskN/skeleton/* files). Only files named like the course's skeleton files are taken
(`taskN/skeleton/NAME`, NAME matching [A-Za-z0-9_]+.(cpp|cu|h|cuh) and present in the course);
anything else is ignored and named. A submission with a symbolic or hard link, or an absolute,
escaping or computed #include, is refused with the reason. The taken files are copied into
OUT/<student>/tree — the course's files without reference solutions, controls, exploits or goldens
— and its runners are built there (`make IMPL=skeleton runners`, no -DSOLUTION) inside bubblewrap:
no network, nothing of the machine but the toolchain and that tree. The course's grader (ROOT's
build/reference/bin/grader: no student code) then grades those runners against the reference's, with
the course's goldens and rubric, and checks the student's own tree for edited harness files. No
name from a submission reaches a shell. One submission that does not build, crashes or hangs
costs only its own row of OUT/gradebook.csv.
"""
import argparse
import csv
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAFF_ONLY = re.compile(r"(^|/)(reference|controls|exploits)(/|$)|^grader/exploits\.json$|^grader/controls\.json$")
STUDENT_NAME = re.compile(r"^[A-Za-z0-9_]+\.(cpp|cu|h|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*(.*)$')
GRADER = os.path.join(ROOT, "build/reference/bin/grader")


class Refused(Exception):
    """The submission is not built, for the reason given."""


def submissions(directory):
    names = []
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if os.path.isdir(path) or entry.endswith((".tar.gz", ".tgz")):
            names.append((entry.split(".")[0], path))
    return names


def unpack(path, dest):
    """The submission as a tree: a copy of the folder (links refused), or the tarball extracted
    safely (plain files and folders only, nothing outside dest)."""
    shutil.rmtree(dest, ignore_errors=True)
    path = os.path.realpath(path)  # the course's own link to a submission (Gradescope) is fine
    if os.path.isdir(path):
        for folder, dirs, files in os.walk(path):
            for n in dirs + files:
                st = os.lstat(os.path.join(folder, n))
                rel = os.path.relpath(os.path.join(folder, n), path)
                if stat.S_ISLNK(st.st_mode):
                    raise Refused(f"a symbolic link in the submission: {rel!r}")
                if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                    raise Refused(f"a hard link in the submission: {rel!r}")
        shutil.copytree(path, dest, symlinks=True)
        return dest
    os.makedirs(dest)
    with tarfile.open(path) as tar:
        members = tar.getmembers()
        links = [m.name for m in members if m.issym() or m.islnk()]
        if links:
            raise Refused(f"a link in the archive: {links[0]!r}")
        safe = [m for m in members if (m.isfile() or m.isdir()) and not os.path.isabs(m.name)
                and ".." not in m.name.split("/")]
        tar.extractall(dest, members=safe)
    inner = [d for d in os.listdir(dest) if os.path.isdir(os.path.join(dest, d))]
    return os.path.join(dest, inner[0]) if len(inner) == 1 and not os.path.isdir(os.path.join(dest, "task1")) else dest


def check_includes(path, rel):
    with open(path, errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1).strip()
            if not target or target[0] not in '<"':
                raise Refused(f"{rel}:{number}: a computed #include ({line.strip()[:80]!r})")
            name = target[1:].split(target[0] == "<" and ">" or '"')[0]
            if name.startswith("/") or ".." in name.split("/"):
                raise Refused(f"{rel}:{number}: #include of {name!r} (absolute or escaping paths are not allowed)")


def student_files(submitted, notes):
    """(task folder, name, path) of every file the submission may give; the others are noted."""
    taken = []
    for task in sorted(d for d in os.listdir(submitted) if re.fullmatch(r"task[0-9]+", d)):
        src = os.path.join(submitted, task, "skeleton")
        course = os.path.join(ROOT, task, "skeleton")
        if not os.path.isdir(src):
            continue
        for name in sorted(os.listdir(src)):
            rel = f"{task}/skeleton/{name}"
            path = os.path.join(src, name)
            if not STUDENT_NAME.match(name) or not os.path.isfile(os.path.join(course, name)) or not os.path.isfile(path):
                notes.append(f"ignored: {rel!r} (not a file of the course's skeleton)")
                continue
            check_includes(path, rel)
            taken.append((task, name, path))
    return taken


def course_tree(dest):
    """The course's tracked files without what holds solutions or staff material, and the
    course's compiled harness objects (so only the student's files are compiled)."""
    shutil.rmtree(dest, ignore_errors=True)
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if STAFF_ONLY.search(f):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dest, f))
    common = os.path.join(ROOT, "build/common")
    if os.path.isdir(common):
        shutil.copytree(common, os.path.join(dest, "build/common"), ignore=shutil.ignore_patterns("skeleton.tmp"))


def bwrap_works():
    try:
        return subprocess.run(bwrap_args("/tmp") + ["/usr/bin/true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def bwrap_args(tree):
    """The build's sandbox: the toolchain read-only, the tree writable, no network, nothing else."""
    a = ["/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            a += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            a += ["--ro-bind", top, top]
    a += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
          "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", tree, tree, "--chdir", tree, "--clearenv",
          "--setenv", "PATH", "/usr/local/cuda/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--"]
    return a


def users_of(tasks):
    """The tasks whose runners hold code of `tasks` (TASKn_USES in the Makefile), and `tasks`."""
    with open(os.path.join(ROOT, "Makefile")) as f:
        uses = {int(m.group(1)): set(map(int, m.group(2).split())) for m in re.finditer(r"^TASK(\d+)_USES\s*:=\s*([\d ]+)$", f.read(), re.M)}
    out = set(tasks)
    for t, used in uses.items():
        if used & set(tasks):
            out.add(t)
    return sorted(out)


def build(tree, tasks, log, timeout):
    """The runners of `tasks`, built in the submission's tree; the course's skeleton runners stand in
    for the others. Returns how the build was sandboxed and whether it built."""
    cmd = ["make", "--no-print-directory", "-j2", "IMPL=skeleton"] + [f"build/skeleton/bin/runner_task{t}" for t in tasks]
    if os.environ.get("CUDA_ARCH"):  # e.g. sm_90 alone, for a class graded on H100s
        cmd.append("CUDA_ARCH=" + os.environ["CUDA_ARCH"])
    if bwrap_works():
        how, argv, pre = "bubblewrap", bwrap_args(tree) + cmd, None
    elif os.geteuid() == 0:
        for folder, _, files in os.walk(tree):
            for n in [folder] + [os.path.join(folder, f) for f in files]:
                os.lchown(n, 65534, 65534)
        how, argv = "uid 65534", cmd

        def pre():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
    else:
        how, argv, pre = "none (not root, no bubblewrap)", cmd, None
    env = {"PATH": "/usr/local/cuda/bin:/usr/bin:/bin", "HOME": "/tmp"}
    b = subprocess.run(argv, cwd=tree, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, env=env, preexec_fn=pre)
    bins = os.path.join(tree, "build/skeleton/bin")
    for runner in os.listdir(os.path.join(ROOT, "build/skeleton/bin")):
        if runner.startswith("runner_task") and not os.path.exists(os.path.join(bins, runner)):
            shutil.copy2(os.path.join(ROOT, "build/skeleton/bin", runner), os.path.join(bins, runner))
    return how, b.returncode == 0


def ensure_course_build():
    """The course's grader and reference runners (the yardstick), and its skeleton runners (the
    stand-ins for tasks a submission leaves untouched)."""
    subprocess.run(["make", "--no-print-directory", "-j2", "IMPL=reference", "build/reference/bin/grader", "runners"], cwd=ROOT,
                   check=True, capture_output=True)
    subprocess.run(["make", "--no-print-directory", "-j2", "IMPL=skeleton", "runners"], cwd=ROOT, check=True, capture_output=True)


def grade_one(name, path, out, timeout, mode="both", tasks=None):
    """Builds and grades one submission; returns its row for the gradebook (also OUT/<name>/row.json).
    mode: what to do of it ("build", "grade": the runners built before, "both")."""
    work = os.path.abspath(os.path.join(out, name))  # absolute: the build's sandbox binds it
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "grade.log"), "a" if mode == "grade" else "w") as log:
        row = build_and_grade(name, path, work, timeout, log, mode, tasks)
    with open(os.path.join(work, "row.json"), "w") as f:
        json.dump(row, f)
    return row


def build_and_grade(name, path, work, timeout, log, mode="both", tasks=None):
    row = {"student": name, "total": 0.0, "flags": "", "sandbox": ""}
    notes = []
    built = os.path.join(work, "built.json")  # what the build step found, for a later --grade-only
    try:
        tree = os.path.join(work, "tree")
        if mode == "grade":
            if not os.path.exists(built):
                return json.load(open(os.path.join(work, "row.json")))  # refused or broken at build time
            with open(built) as f:
                b = json.load(f)
            submitted, taken, notes, row["sandbox"] = b["submitted"], [tuple(t) for t in b["taken"]], b["notes"], b["sandbox"]
        else:
            submitted = unpack(path, os.path.join(work, "submitted"))
            taken = student_files(submitted, notes)
            if not taken:
                row["flags"] = "; ".join(notes + ["no taskN/skeleton files of the course in the submission"])
                return row
            course_tree(tree)
            for task, file_name, src in taken:
                shutil.copyfile(src, os.path.join(tree, task, "skeleton", file_name))
            print(f"taken: {', '.join(f'{t}/skeleton/{n}' for t, n, _ in taken)}", file=log, flush=True)
            os.makedirs(os.path.join(tree, "build/skeleton/bin"), exist_ok=True)
            row["sandbox"], ok = build(tree, users_of({int(t[4:]) for t, _, _ in taken}), log, timeout)
            if not ok:
                row["flags"] = "; ".join(notes + ["does not build (see grade.log)"])
                return row
            with open(built, "w") as f:
                json.dump({"submitted": os.path.relpath(submitted, work), "taken": taken, "notes": notes, "sandbox": row["sandbox"]}, f)
            if mode == "build":
                row["flags"] = "; ".join(notes + ["built, not graded yet (--grade-only grades it)"])
                return row
        submitted = os.path.join(work, submitted) if not os.path.isabs(submitted) else submitted
        bins = os.path.join(tree, "build/skeleton/bin")
        cmd = [GRADER, "--out", os.path.abspath(work), "--impl", name, "--root", os.path.abspath(submitted),
               "--bin-dir", bins, "--reference-bin-dir", os.path.join(ROOT, "build/reference/bin")]
        for t in tasks or []:
            cmd += ["--task", str(t)]
        for task in sorted({t for t, _, _ in taken if not tasks or int(t[4:]) in tasks}):
            sources = os.listdir(os.path.join(ROOT, task, "skeleton"))
            objs = [os.path.join(tree, "build/skeleton", task, "skeleton", os.path.splitext(f)[0] + ".o") for f in sources]
            cmd += ["--objects", f"{task[4:]}={','.join(objs)}"]
        g = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, start_new_session=True)
        if g.returncode != 0:
            row["flags"] = "; ".join(notes + [f"grader exited {g.returncode}"])
            return row
        graded = summarise(name, work)
        graded["sandbox"] = row["sandbox"]
        graded["flags"] = "; ".join(notes + ([graded["flags"]] if graded["flags"] else []))
        return graded
    except Refused as e:
        row["flags"] = "; ".join(notes + [f"refused: {e}"])
        return row
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
        w = csv.DictWriter(f, fieldnames=["student"] + tasks + ["total", "flags", "sandbox"], restval=0.0)
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
    ap.add_argument("--tasks", help="grade only these tasks, e.g. 4,5")
    ap.add_argument("--build-only", action="store_true", help="build the runners, grade nothing (a build machine)")
    ap.add_argument("--grade-only", action="store_true", help="grade runners an earlier --build-only built (a GPU node)")
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
    mode = "build" if args.build_only else "grade" if args.grade_only else "both"
    tasks = [int(t) for t in args.tasks.split(",")] if args.tasks else None
    if mode != "grade":
        ensure_course_build()
    rows = []
    for name, path in chosen:
        row = grade_one(name, path, args.out, args.timeout, mode, tasks)
        print(f"  {name:<24} {row['total']:6.2f}  {row['flags']}", flush=True)
        rows.append(row)
    if args.index is None:
        write_gradebook(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
