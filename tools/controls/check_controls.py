#!/usr/bin/env python3
"""Builds every negative control of grader/controls.json, grades its task, and checks that the
grader fails it for the reason it was built to show. Prints one line per control and a summary;
exits 1 if any control was not caught (or could not be built). A control of a GPU task on a
machine without a GPU is reported as skipped, never as caught.

Calibration cases (positive controls: "calibration" names a ladder step built as a submission) are
timed by the grader (--perf-only) against the reference, and their speed credit must land inside
"credit": [low, high] — the band the rubric's curve was set to give that step.

    tools/controls/check_controls.py [--only NAME]... [--repeat N]

--repeat N grades each selected control N times (a GPU run): a calibration case's credit is printed for
every run and its spread (lowest and highest) at the end, the figure docs/grader.md gives for how much a
grade moves from run to run.

What it costs (`make test` runs it on 2 cores without a GPU): a control compiles only its patched file and links
only the runner of its task against the reference build's objects; the reference's grader grades it (the grader
links no student code). --one-arch (make test, without a GPU) compiles that file for sm_90 alone: nothing here
runs it, so one architecture proves it builds. --jobs N checks N controls side by side; a GPU run is always
one at a time, so that no control is timed beside another.
"""
import argparse
import concurrent.futures
import difflib
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ci"))
from task_folders import task_folders  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRADER_TIMEOUT_S = 1800
REFERENCE_GRADER = "build/reference/bin/grader"
CARRIED_REFERENCE = "build/carry/reference"  # on the GPU machine: the reference's grader and runners, built elsewhere
# What the Makefile compiles CUDA for (CUDA_ARCH); --one-arch narrows it to one, for builds that only need to compile.
MAKE_ARCH = []
ONE_ARCH = "CUDA_ARCH=-gencode arch=compute_90,code=sm_90"


def make(*args):
    """make -j2 IMPL=reference ARGS… in the repository (with --one-arch's CUDA_ARCH)."""
    return run(["make", "--no-print-directory", "-j2", "IMPL=reference"] + MAKE_ARCH + list(args))


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)


def setup(tasks):
    """What `make taskN` does first (`make setup`): Debian's packages, then these tasks' goldens where stale."""
    subprocess.run(["make", "--no-print-directory", "setup", "SETUP_TASKS=" + (" ".join(map(str, sorted(tasks))) or "none")],
                   cwd=ROOT, check=True)


def selected(listing, only, prebuilt):
    """The entries of grader/<listing>.json named by --only (all without it), set up for as `make taskN` does
    unless prebuilt (a GPU machine running what was built elsewhere)."""
    with open(os.path.join(ROOT, "grader", listing + ".json")) as f:
        every = json.load(f)[listing]
    names = [e["name"] for e in every]
    unknown = [n for n in (only or []) if n not in names]
    if unknown:  # a misspelt name would otherwise select nothing and "pass" with 0 checked
        def hint(n):
            close = difflib.get_close_matches(n, names, 1)
            return f"'{n}'" + (f" (did you mean '{close[0]}'?)" if close else "")
        sys.exit(f"grader/{listing}.json has no entry named "
                 + ", ".join(hint(n) for n in unknown))
    entries = [e for e in every if not only or e["name"] in only]
    if not prebuilt:
        setup({e["task"] for e in entries})
    return entries


def reference_sources(task):
    """The reference's sources of `task` (TASKn_SRC: every folder of the task), relative to the repository."""
    srcs = sorted(s for d in task_folders(task) for ext in ("cpp", "cu") for s in glob.glob(os.path.join(ROOT, d, "reference", f"*.{ext}")))
    return [os.path.relpath(s, ROOT) for s in srcs]


def patch_target(control):
    """The file a control's patch changes (its '--- a/<path>' line)."""
    with open(os.path.join(ROOT, control["patch"])) as f:
        return next(line.split()[1][2:] for line in f if line.startswith("--- a/"))


def object_of(src):
    """Where the Makefile puts the reference build's object of `src`."""
    return "build/reference/" + os.path.splitext(src)[0] + ".o"


def task_sources(task, replaced, by):
    """The reference's sources of `task` (TASKn_SRC) with one file swapped for `by`: a control's patched copy,
    or a calibration case's submission. The task's other files stay (Task 4's bonus parts beside its fp32 kernel)."""
    ref = reference_sources(task)
    if replaced not in ref:
        raise ValueError(f"{replaced} is not one of task {task}'s reference files ({', '.join(ref)})")
    return [by if s == replaced else s for s in ref]


def check_calibration(control, build, prebuilt):
    """A ladder step as a submission: its runner timed by the reference grader, credit in band. With "full_grade": graded
    in full (its cases too, not --perf-only): every case of its task must pass and the speed table be measured — a
    correct but slow kernel must get its correctness points and learn its speed."""
    task, src = control["task"], control["calibration"]
    runner = f"{build}/runner_task{task}"
    if prebuilt:
        grader, ref = CARRIED_REFERENCE + "/grader", CARRIED_REFERENCE
        if not os.path.exists(os.path.join(ROOT, runner)):
            return False, f"no prebuilt runner in {build} (did tools/gpu/pack_gpu.sh build this calibration case?)"
    else:
        grader, ref = REFERENCE_GRADER, "build/reference/bin"  # both built by cost_options
        srcs = task_sources(task, control["replaces"], src)
        p = make(f"TASK{task}_SRC={' '.join(srcs)}", f"RUNNER_BIN_DIR={build}", runner)
        if p.returncode != 0:
            return False, "does not build:\n" + p.stdout[-2000:] + p.stderr[-2000:]
    full = control.get("full_grade", False)
    part = ["--part", control["part"]] if "part" in control else []  # a bonus part's curve (5b): that part alone
    results, why = run_grader([grader, "--task", str(task)] + part + ([] if full else ["--perf-only"]) +
                              ["--out", build, "--impl", control["name"], "--bin-dir", build, "--reference-bin-dir", ref], build)
    if results is None:
        return False, why
    tests = results["tests"]
    if tests and tests[0]["extra_data"]["state"] == "not run":
        return None, tests[0]["output"]
    failed = [t for t in tests if t["extra_data"].get("state") not in ("performance", None) and t["score"] < t["max_score"] - 1e-9]
    if full and failed:
        return False, f"{len(failed)} case(s) lost points, e.g. {failed[0]['name']}: {failed[0]['output'].strip()[:200]}"
    rows = [t for t in tests if t["extra_data"].get("state") == "performance"]
    if not rows:
        return False, "the grader measured nothing: " + " ".join(t["output"] for t in tests)[:300]
    # a slow kernel's shapes that would take too long to time are marked so (grader/timed.cpp), the others timed
    too_slow = [t for t in rows if t["extra_data"].get("reason", "").startswith("not timed, too slow")]
    flagged = [t["extra_data"]["reason"] for t in rows if t["extra_data"].get("reason") and t not in too_slow]
    if flagged:
        return False, f"a timed shape was flagged: {flagged[0][:200]}"
    if len(too_slow) == len(rows):
        return False, f"no shape was timed: {too_slow[0]['extra_data']['reason'][:200]}"
    credit = sum(t["score"] for t in rows) / sum(t["max_score"] for t in rows)
    ratios = ", ".join(f"{t['extra_data']['ms'] / t['extra_data']['reference_ms']:.2f}" for t in rows if t["extra_data"].get("reference_ms"))
    lo, hi = control["credit"]
    where = f"credit {100 * credit:.0f}% (band {100 * lo:.0f}–{100 * hi:.0f}%), time / reference's: {ratios}"
    if too_slow:
        where += f"; {len(too_slow)} of {len(rows)} shapes too slow to time ({too_slow[0]['name']}: " \
                 f"{too_slow[0]['extra_data']['reason'][:160]})"
    return (lo <= credit <= hi), ("in band: " if lo <= credit <= hi else "OUT OF BAND: ") + where


def audit_calibration(control, build):
    """Without a GPU: a ladder step is honest code, and the grader's audit of its objects must not flag it."""
    task, src = control["task"], control["calibration"]
    srcs = task_sources(task, control["replaces"], src)
    p = make(object_of(src))
    if p.returncode != 0:
        return False, "does not build:\n" + p.stdout[-2000:] + p.stderr[-2000:]
    os.makedirs(os.path.join(ROOT, build), exist_ok=True)
    results, why = run_grader([REFERENCE_GRADER, "--task", str(task), "--perf-only", "--out", build, "--impl", control["name"],
                               "--objects", f"{task}=" + ",".join(object_of(s) for s in srcs)], build)
    if results is None:
        return False, why
    flags = [f for t in results["tests"] for f in t["extra_data"].get("flags", [])]
    if flags:
        return False, f"honest code flagged by the audit: {flags[0][:200]}"
    return None, "not timed: no GPU here (its objects pass the audit; a calibration case is timed on a GPU, tools/gpu/pack_gpu.sh builds it)"


def add_cost_options(ap):
    """--jobs and --one-arch, shared with check_exploits.py."""
    ap.add_argument("--jobs", type=int, default=1, help="check this many side by side (builds and CPU grading; "
                    "a GPU run is always one at a time)")
    ap.add_argument("--one-arch", action="store_true", help="compile CUDA for sm_90 alone: these builds are only compiled here")


def cost_options(args):
    """Applies --one-arch; returns how many to check side by side (1 wherever anything is timed on a GPU). First
    the reference build they all share is brought up to date (its grader, runners and objects, all architectures),
    so that none of them builds it, and no two build the same file at once."""
    jobs = 1 if args.prebuilt or has_gpu() else max(1, args.jobs)
    if not args.prebuilt:
        p = make(REFERENCE_GRADER)  # before --one-arch applies: the shared build keeps every architecture
        if p.returncode != 0:
            sys.exit("the reference's grader and runners do not build:\n" + p.stdout[-2000:] + p.stderr[-2000:])
    if args.one_arch:
        MAKE_ARCH[:] = [ONE_ARCH]
    return jobs


def side_by_side(fn, items, jobs):
    """fn(item) for each item, `jobs` at a time, yielded in the items' order as each is done."""
    if jobs == 1:
        yield from map(fn, items)
        return
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(fn, items)


def has_gpu():
    """Whether this machine has a usable NVIDIA GPU (nvidia-smi lists one)."""
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def check(control, prebuilt=False):
    name, task = control["name"], control["task"]
    build = f"build/controls/{name}"
    if "calibration" in control:
        if not prebuilt and not has_gpu():  # timing needs a GPU; the audit of its objects does not
            if not os.path.exists(os.path.join(ROOT, control["calibration"])):
                return False, f"its source {control['calibration']} does not exist"
            return audit_calibration(control, build)
        os.makedirs(os.path.join(ROOT, build), exist_ok=True)
        return check_calibration(control, build, prebuilt)
    target = patch_target(control)
    if "/reference/" not in target:
        return check_tree(control, build, target)
    src = f"{build}/src/{os.path.basename(target)}"
    if prebuilt:  # the objects stayed where they were built: no symbol check here, and no compiling
        if not os.path.exists(os.path.join(ROOT, build, f"runner_task{task}")):
            return False, f"no prebuilt runner in {build} (did tools/gpu/pack_gpu.sh build this control?)"
        # the GPU machine: the reference's grader and runners travelled in build/carry/reference
        return grade(control, build, ["--bin-dir", build, "--reference-bin-dir", CARRIED_REFERENCE], CARRIED_REFERENCE + "/grader")
    os.makedirs(os.path.join(ROOT, build, "src"), exist_ok=True)
    p = run(["patch", "--quiet", "-o", src, target, control["patch"]])
    if p.returncode != 0:
        return False, f"patch does not apply to {target}: {p.stdout.strip()} {p.stderr.strip()}"
    # the reference's objects for everything else; only the patched file is compiled anew, and only the runner of
    # the control's task linked. The reference's grader grades it (the grader holds no student code: --bin-dir).
    srcs = task_sources(task, target, src)
    p = make(f"TASK{task}_SRC={' '.join(srcs)}", f"RUNNER_BIN_DIR={build}", f"{build}/runner_task{task}")
    if p.returncode != 0:
        if control.get("static") and os.path.exists(os.path.join(ROOT, object_of(src))):
            # A runner has no cuBLAS to link against; the symbol check must still name the call:
            # the object, graded beside the reference's runners.
            ok, why = grade(control, build, ["--objects", f"{task}={object_of(src)}", "--bin-dir", "build/reference/bin"])
            return ok, why + " (and its runner does not link)"
        return False, "does not build:\n" + p.stdout[-2000:] + p.stderr[-2000:]
    return grade(control, build, ["--objects", f"{task}=" + ",".join(object_of(s) for s in srcs), "--bin-dir", build])


def check_tree(control, build, target):
    """A control that edits the harness: the reference grader grades a copy of the tree with the
    patch applied (--root), and must report the edit."""
    tree = os.path.join(ROOT, build, "tree")
    subprocess.run(["rm", "-rf", tree], check=True)
    os.makedirs(tree)
    with open(os.path.join(ROOT, "grader/protected.sha256")) as f:
        files = [line.split(None, 1)[1].strip() for line in f if line.strip()]
    subprocess.run(["cp", "--parents"] + files + [tree], cwd=ROOT, check=True)
    p = subprocess.run(["patch", "--quiet", "-p1", "-i", os.path.join(ROOT, control["patch"])], cwd=tree,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return False, f"patch does not apply to {target}: {p.stdout.strip()} {p.stderr.strip()}"
    return grade(control, build, ["--root", tree])


def run_grader(cmd, build):
    """Runs a grader in its own session (a time limit ends it and every child it started); returns
    (build/results.json, "") or (None, why)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=GRADER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, f"the grader did not finish within {GRADER_TIMEOUT_S} s"
    if proc.returncode != 0:
        return None, f"grader exited {proc.returncode}: {err[-1000:]}"
    with open(os.path.join(ROOT, build, "results.json")) as f:
        return json.load(f), ""


def grade(control, build, extra, grader=REFERENCE_GRADER):
    name, task = control["name"], control["task"]
    cmd = [grader, "--task", str(task), "--out", build, "--impl", name] + extra
    if "timeout_s" in control:
        cmd += ["--timeout", str(control["timeout_s"])]
    results, why = run_grader(cmd, build)
    if results is None:
        return False, why
    tests = results["tests"]
    if tests and tests[0]["extra_data"]["state"] == "not run" and not tests[0]["extra_data"].get("flags"):
        return None, tests[0]["output"]
    lost = [t for t in tests if t["score"] < t["max_score"] or t["extra_data"].get("flags")
            or t["extra_data"]["state"] == "harness edited"]
    reasons = [t["extra_data"].get("reason", "") + " " + " ".join(t["extra_data"].get("flags", [])) for t in lost]
    earned = results["score"] + results["extra_data"].get("bonus_score", 0)  # the tasks' total and the bonus parts'
    if not lost or earned >= sum(t["max_score"] for t in tests) > 0:
        return False, "was NOT caught: full marks"
    if not any(control["expect"] in r for r in reasons):
        return False, f"lost points, but no case says '{control['expect']}': {reasons[:3]}"
    first = next(r for r in reasons if control["expect"] in r)
    return True, f"caught ({len(lost)}/{len(tests)} cases failed): {first[:110]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append")
    ap.add_argument("--prebuilt", action="store_true", help="use graders already built (e.g. on a GPU machine)")
    ap.add_argument("--grader-timeout", type=int, default=1800, help="seconds one control's grading may take")
    ap.add_argument("--repeat", type=int, default=1, help="grade each control this many times (the spread of a calibration case's credit)")
    add_cost_options(ap)
    args = ap.parse_args()
    global GRADER_TIMEOUT_S
    GRADER_TIMEOUT_S = args.grader_timeout
    controls = [c for c in selected("controls", args.only, args.prebuilt)
                if not (args.prebuilt and c.get("static"))]  # a symbol check needs the objects, which stay where they were built
    jobs = cost_options(args)

    def timed_check(c):
        started = time.monotonic()
        ok, why = check(c, args.prebuilt)
        return c, ok, why, time.monotonic() - started

    passed = failed = skipped = 0
    credits = {}  # calibration case → its credit (%) in each run
    for c, ok, why, seconds in side_by_side(timed_check, [c for c in controls for _ in range(args.repeat)], jobs):
        passed, failed, skipped = passed + (ok is True), failed + (ok is False), skipped + (ok is None)
        label = {True: "caught", False: "MISSED", None: "skipped"}[ok]
        if "calibration" in c:
            label = {True: "in band", False: "FAILED", None: "skipped"}[ok]
            m = re.search(r"credit (\d+)%", why)
            if m:
                credits.setdefault(c["name"], []).append(int(m.group(1)))
        print(f"  [{label}] {c['name']:<30} {why} ({seconds:.0f} s)", flush=True)
    for name, cs in credits.items():
        if len(cs) > 1:
            print(f"  spread of {name}: credit {min(cs)}–{max(cs)}% over {len(cs)} runs ({', '.join(f'{x}%' for x in cs)})")
    print(f"controls: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
