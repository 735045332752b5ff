#!/usr/bin/env bash
# check_batch.sh — batch grading of a class on sample submissions (a solution with stray files, among
# them one named "evil;rm -rf ~.cpp" and a bonus file in Task 4's folder instead of its own; the skeleton as a tarball; an archive with '..' and absolute
# members; a student folder named with shell syntax; a zeros control; one that does not compile; one
# that edits the harness; and attempts at the model solution: a symbolic link, a hard link, a link in
# an archive, an escaping include, one hidden behind a comment and a digraph, an include by name with
# SOLUTION defined, a computed include): the right gradebook; trees without reference sources,
# controls, goldens or .git, compiled without -DSOLUTION; nothing written outside; the Slurm
# script's content; one array element's command run here and merged; the Gradescope entry on one
# submission; a submission's budget: a 1 TB sparse file, 25000 files, 25000 archive members, folders 20 deep;
# a compile-time bomb, a runner that would fork; the run's peak memory and disk against a stated bound;
# a run stopped by a (simulated) full disk, and resumed; the class graded by workers on two (test) GPUs as serially.
# Run by `make test`. CPU tasks only (1 and 3), so it needs no GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
make --no-print-directory setup SETUP_TASKS="1 3" || exit 1  # as `make taskN`: packages (unifdef, patch), goldens
T=build/batch-test
rm -rf "$T" && mkdir -p "$T/subs"
fail() { echo "check-batch: $*"; exit 1; }
sub() { mkdir -p "$T/subs/$1/task1/skeleton" "$T/subs/$1/task3/skeleton"; }
solution() { unifdef -DSOLUTION=1 "$1" > "$2"; test $? -le 1; }  # a solution as a student writes it: no #if SOLUTION
sub reference && solution task1/reference/naive_mha.cpp "$T/subs/reference/task1/skeleton/naive_mha.cpp" \
  && solution task3/reference/flash_cpu.cpp "$T/subs/reference/task3/skeleton/flash_cpu.cpp" \
  && echo "not a course file" > "$T/subs/reference/task1/skeleton/notes.txt" \
  && echo "int x;" > "$T/subs/reference/task1/skeleton/evil;rm -rf ~.cpp" \
  && mkdir -p "$T/subs/reference/task4/skeleton" && cp task4_bf16/skeleton/flash_attention_bf16.cu "$T/subs/reference/task4/skeleton/"
sub zeros && patch -s -o "$T/zeros.cpp" task1/reference/naive_mha.cpp task1/controls/zeros.patch \
  && solution "$T/zeros.cpp" "$T/subs/zeros/task1/skeleton/naive_mha.cpp"
sub broken && solution task1/reference/naive_mha.cpp "$T/broken.cpp" \
  && sed 's/namespace task1 {/namespace task1 { this does not compile/' "$T/broken.cpp" > "$T/subs/broken/task1/skeleton/naive_mha.cpp"
sub editor && solution task1/reference/naive_mha.cpp "$T/subs/editor/task1/skeleton/naive_mha.cpp" && mkdir -p "$T/subs/editor/common" \
  && patch -s -o "$T/subs/editor/common/compare.cpp" common/compare.cpp grader/controls/harness_compare_always_passes.patch \
  && for f in $(sed 's/^[0-9a-f]*  //' grader/protected.sha256 | grep -v '^common/compare.cpp$'); do mkdir -p "$T/subs/editor/$(dirname "$f")"; cp "$f" "$T/subs/editor/$f"; done
# Attempts at the model solution: a link to it, a hard link to a copy, an escaping #include of it (also
# behind a comment and spelt with a digraph), an #include by its name with SOLUTION defined (the build
# tree has no reference sources), a computed #include.
sub linker && ln -s "$PWD/task1/reference/naive_mha.cpp" "$T/subs/linker/task1/skeleton/naive_mha.cpp"
sub hardlinker && solution task1/reference/naive_mha.cpp "$T/hard.cpp" && ln "$T/hard.cpp" "$T/subs/hardlinker/task1/skeleton/naive_mha.cpp"
sub escaper && printf '#define SOLUTION 1\n#include "../reference/naive_mha.cpp"\n' > "$T/subs/escaper/task1/skeleton/naive_mha.cpp"
sub sneaky && printf '#define SOLUTION 1\n/* a\n */ %%: /**/ include \\\n  "../reference/naive_mha.cpp"\n' > "$T/subs/sneaky/task1/skeleton/naive_mha.cpp"
sub namer && printf '#define SOLUTION 1\n#include "task1/reference/naive_mha.cpp"\n' > "$T/subs/namer/task1/skeleton/naive_mha.cpp"
sub macro && printf '#define REF "task1/reference/naive_mha.cpp"\n#include REF\n' > "$T/subs/macro/task1/skeleton/naive_mha.cpp"
# A student folder whose name is shell syntax: graded under a plain name, nothing run.
Q="$T/subs/o'neil \$(touch pwned)" && mkdir -p "$Q/task1/skeleton" && cp task1/skeleton/naive_mha.cpp "$Q/task1/skeleton/"
mkdir -p "$T/skel/student/task1/skeleton" && cp task1/skeleton/naive_mha.cpp "$T/skel/student/task1/skeleton/" \
  && tar -C "$T/skel" -czf "$T/subs/skeleton.tar.gz" student
# an archive whose member is a link to the model solution
mkdir -p "$T/tarlink/student/task1/skeleton" && ln -s "$PWD/task1/reference/naive_mha.cpp" "$T/tarlink/student/task1/skeleton/naive_mha.cpp" \
  && tar -C "$T/tarlink" -czf "$T/subs/tarlink.tar.gz" student
# an archive with members that would land outside (../x.cpp, an absolute path) beside the skeleton
/usr/bin/python3 - "$T/subs/dotdot.tar.gz" task1/skeleton/naive_mha.cpp "$PWD/$T" <<'PY' || fail "could not write dotdot.tar.gz"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as tar:
    tar.add(sys.argv[2], arcname="student/task1/skeleton/naive_mha.cpp")
    for name in ("student/task1/skeleton/../x.cpp", "student/task1/skeleton/../../../../../../x.cpp", sys.argv[3] + "/abs.cpp"):
        data = b"int escaped;\n"
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
PY
# Budgets (docs/grader.md, "A submission's budget"): a 1 TB sparse file beside a correct Task 1 (never read: the
# row keeps its points), a folder of 25000 files, an archive of 25000 members, and an archive nested 20 folders deep.
sub sparse && solution task1/reference/naive_mha.cpp "$T/subs/sparse/task1/skeleton/naive_mha.cpp" \
  && truncate -s 1T "$T/subs/sparse/notes.bin"
mkdir -p "$T/subs/many/task1/skeleton" "$T/subs/many/data" && cp task1/skeleton/naive_mha.cpp "$T/subs/many/task1/skeleton/" \
  && (cd "$T/subs/many/data" && seq 1 25000 | xargs touch)
/usr/bin/python3 - "$T/subs" task1/skeleton/naive_mha.cpp <<'PY' || fail "could not write the budget archives"
import io, sys, tarfile
with tarfile.open(sys.argv[1] + "/members.tar.gz", "w:gz") as tar:
    tar.add(sys.argv[2], arcname="student/task1/skeleton/naive_mha.cpp")
    for i in range(25000):
        tar.addfile(tarfile.TarInfo(f"student/data/{i}"), io.BytesIO(b""))
with tarfile.open(sys.argv[1] + "/deep.tar.gz", "w:gz") as tar:
    tar.add(sys.argv[2], arcname="student/task1/skeleton/naive_mha.cpp")
    tar.addfile(tarfile.TarInfo("student/" + "/".join("d" * 20) + "/x.txt"), io.BytesIO(b""))
PY

# A compile-time bomb (macros that expand to 10⁹ characters: the preprocessor needs more than the 4 GB a build process
# may have) and a runner that would fork (the audit names fork among the calls a kernel has no use for).
sub bomb && solution task1/reference/naive_mha.cpp "$T/subs/bomb/task1/skeleton/naive_mha.cpp" && cat >> "$T/subs/bomb/task1/skeleton/naive_mha.cpp" <<'CPP'
#define A0 "all work and no play makes a dull kernel "
#define A1 A0 A0 A0 A0 A0 A0 A0 A0 A0 A0
#define A2 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1
#define A3 A2 A2 A2 A2 A2 A2 A2 A2 A2 A2
#define A4 A3 A3 A3 A3 A3 A3 A3 A3 A3 A3
#define A5 A4 A4 A4 A4 A4 A4 A4 A4 A4 A4
#define A6 A5 A5 A5 A5 A5 A5 A5 A5 A5 A5
#define A7 A6 A6 A6 A6 A6 A6 A6 A6 A6 A6
#define A8 A7 A7 A7 A7 A7 A7 A7 A7 A7 A7
const char* bomb = A8;
CPP
sub forker && solution task1/reference/naive_mha.cpp "$T/subs/forker/task1/skeleton/naive_mha.cpp" \
  && printf '#include <unistd.h>\nnamespace task1 {\nint spare_worker() { return fork(); }\n}\n' >> "$T/subs/forker/task1/skeleton/naive_mha.cpp"
# The run's peak memory (its whole process tree) and the peak size of its folder, against the bound docs/grader.md states.
/usr/bin/python3 tools/class/peak_usage.py --folder "$T/out" --report "$T/peak.json" -- \
  /usr/bin/python3 tools/class/batch_grade.py --submissions "$T/subs" --out "$T/out" --timeout 900 || fail "batch_grade failed"
/usr/bin/python3 -c "
import json, sys; p = json.load(open('$T/peak.json'))
sys.exit(0 if p['peak_memory_mb'] <= 9 * 1024 and p['peak_disk_mb'] <= 2048 else 1)" \
  || fail "the sample class's run went past its bound (9 GB of memory, 2 GB of disk): $(cat "$T/peak.json")"
echo "check-batch: the sample class's run: $(cat "$T/peak.json") (bound: 9 GB, 2 GB)"
/usr/bin/python3 - "$T/out/gradebook.csv" <<'PY' || fail "wrong gradebook"
import csv, sys
rows = {r["student"]: r for r in csv.DictReader(open(sys.argv[1]))}
sandboxed = lambda r: r["sandbox"] in ("bubblewrap", "uid 65534")
unbuilt = lambda r: float(r["total"]) == 0 and not r["sandbox"]  # refused: never built
want = {"reference": lambda r: float(r["task1"]) == 2 and float(r["task3"]) == 3 and float(r["total"]) >= 5 and sandboxed(r)
                               and "ignored: 'task1/skeleton/notes.txt'" in r["flags"] and "ignored: 'task1/skeleton/evil;rm -rf ~.cpp'" in r["flags"]
                               and "the course's flash_attention_bf16.cu is task4_bf16/skeleton/flash_attention_bf16.cu" in r["flags"],
        "skeleton": lambda r: float(r["total"]) == 0 and not r["flags"] and sandboxed(r),
        "dotdot": lambda r: float(r["total"]) == 0 and sandboxed(r) and "ignored: archive member 'student/task1/skeleton/../x.cpp'" in r["flags"]
                            and "ignored: archive member 'student/task1/skeleton/../../../../../../x.cpp'" in r["flags"]
                            and "/abs.cpp' (absolute or '..' path)" in r["flags"],
        "o_neil___touch_pwned_": lambda r: float(r["total"]) == 0 and sandboxed(r) and "graded as 'o_neil___touch_pwned_'" in r["flags"],
        "zeros": lambda r: 0 < float(r["task1"]) < 2 and float(r["task3"]) == 0,
        "broken": lambda r: float(r["total"]) == 0 and "does not build" in r["flags"],
        "editor": lambda r: float(r["total"]) == 0 and "harness edited: common/compare.cpp" in r["flags"],
        "linker": lambda r: unbuilt(r) and "refused: a symbolic link in the submission: 'task1/skeleton/naive_mha.cpp'" in r["flags"],
        "hardlinker": lambda r: unbuilt(r) and "refused: a hard link in the submission: 'task1/skeleton/naive_mha.cpp'" in r["flags"],
        "escaper": lambda r: unbuilt(r) and "refused: task1/skeleton/naive_mha.cpp:2: #include of '../reference/naive_mha.cpp'" in r["flags"],
        "sneaky": lambda r: unbuilt(r) and "refused: task1/skeleton/naive_mha.cpp:3: #include of '../reference/naive_mha.cpp'" in r["flags"],
        "namer": lambda r: float(r["total"]) == 0 and "does not build" in r["flags"],
        "macro": lambda r: unbuilt(r) and "computed #include" in r["flags"],
        "tarlink": lambda r: unbuilt(r) and "refused: a link in the archive" in r["flags"],
        "sparse": lambda r: float(r["task1"]) == 2 and sandboxed(r)
                            and "ignored: everything but the skeleton files, the largest 'notes.bin' (1.0 TB)" in r["flags"],
        "many": lambda r: unbuilt(r) and "refused: the submission holds more than 20000 files and folders" in r["flags"],
        "members": lambda r: unbuilt(r) and "refused: the archive holds more than 20000 members" in r["flags"],
        "deep": lambda r: unbuilt(r) and "refused: the archive nests folders more than 16 deep" in r["flags"],
        "bomb": lambda r: float(r["total"]) == 0 and "the build ran out of memory: a compiler process used more than 4 GB" in r["flags"],
        "forker": lambda r: float(r["task1"]) == 0 and "fork" in r["flags"]}
bad = [f"{k}: {rows.get(k)}" for k, ok in want.items() if k not in rows or not ok(rows[k])]
bad += [f"unexpected row {k}" for k in rows if k not in want]
print("\n".join(bad) or f"check-batch: gradebook right for {len(rows)} submissions")
sys.exit(1 if bad else 0)
PY
# The trees the submissions were built in: no reference sources, controls, exploits, goldens or .git;
# student files compiled without -DSOLUTION; nothing of the archive or the folder name landed outside.
leaks=$(for t in "$T"/out/*/tree "$T"/out/.course/tree; do
  (cd "$t" && find . \( -path '*/reference' -o -path '*/reference/*' -o -name 'reference_times.py' -o -path '*/ladder*' \
                      -o -path '*/controls*' -o -path '*/exploits*' -o -path ./tools/class -o -path ./tools/gpu -o -path ./tools/kit \
                      -o -path ./goldens -o -name '*.safetensors' -o -name .git \) -printf "$t/%P\n")
done | head -3)
[ -z "$leaks" ] || fail "a build tree holds staff material: $leaks"
[ -x "$T/out/reference/tree/build/skeleton/bin/runner_task1" ] || fail "the reference submission's runner was not built in its tree"
grep -q -- '-DSOLUTION' "$T/out/reference/grade.log" && fail "a student file was compiled with -DSOLUTION"
grep -q 'task1/skeleton/naive_mha.cpp -o build/skeleton/task1/skeleton/naive_mha.o' "$T/out/reference/grade.log" \
  || fail "the reference submission's file was not compiled in its tree"
found=$(find "$T" . /tmp -maxdepth 8 \( -name pwned -o -name x.cpp -o -name abs.cpp \) -newer "$T/subs/dotdot.tar.gz" 2>/dev/null | grep -v "^$T/subs/" | head -3)
[ -z "$found" ] || fail "written outside a submission's folder: $found"
echo "check-batch: build trees hold no staff material; no -DSOLUTION; nothing written outside"

# Slurm: the script, then the editor's array element run here with the command it holds, then the merge.
N=$(ls "$T/subs" | wc -l)
I=$(( $(LC_ALL=C ls "$T/subs" | grep -n '^editor$' | cut -d: -f1) - 1 ))
cp "$T/out/gradebook.csv" "$T/gradebook.batch.csv"
/usr/bin/python3 tools/class/batch_grade.py --submissions "$T/subs" --out "$T/out" --tasks 1,3 --slurm >/dev/null || fail "no slurm script"
S="$T/out/grade_array.sbatch"
for want in "#SBATCH --array=0-$((N - 1))" "#SBATCH --gres=gpu:h100:1" "--tasks 1,3" '--index "$SLURM_ARRAY_TASK_ID"'; do
  grep -qF -- "$want" "$S" || fail "the Slurm script lacks: $want"
done
rm -rf "$T/out/editor"
SLURM_ARRAY_TASK_ID=$I bash -c "$(grep -E '^/usr/bin/python3 ' "$S")" >/dev/null || fail "array element $I failed"
/usr/bin/python3 tools/class/batch_grade.py --collect --out "$T/out" >/dev/null
diff <(grep '^editor,' "$T/gradebook.batch.csv") <(grep '^editor,' "$T/out/gradebook.csv") >/dev/null \
  || fail "array element $I (editor) merged differently from the batch run"
[ "$(wc -l < "$T/out/gradebook.csv")" = "$(wc -l < "$T/gradebook.batch.csv")" ] || fail "--collect lost or added rows"
echo "check-batch: Slurm script right; array element $I (editor) run here and merged into the same row"

# The run's health: a run that finds the disk full stops before the next submission with one message and keeps
# what it graded; the same command then goes on from there (a full disk simulated after one submission).
mkdir -p "$T/subs2" "$T/out2" && for who in a b c; do cp -r "$T/subs/skeleton.tar.gz" "$T/subs2/$who.tar.gz"; done \
  && cp -r "$T/out/.course" "$T/out2/"
ATTNLAB_BATCH_FULL_AFTER=1 /usr/bin/python3 tools/class/batch_grade.py --submissions "$T/subs2" --out "$T/out2" --tasks 1 --no-setup \
  > "$T/stop.log" 2>&1
rc=$?
[ $rc = 3 ] && grep -q "batch: stopped before b: only 0.0 GB free" "$T/stop.log" && [ -f "$T/out2/.stopped" ] \
  && [ "$(wc -l < "$T/out2/gradebook.csv")" = 2 ] || { cat "$T/stop.log"; fail "a full disk did not stop the run cleanly (exit $rc)"; }
before=$(stat -c %Y "$T/out2/a/row.json")
/usr/bin/python3 tools/class/batch_grade.py --submissions "$T/subs2" --out "$T/out2" --tasks 1 --no-setup > "$T/resume.log" 2>&1 \
  || { cat "$T/resume.log"; fail "the resumed run failed"; }
grep -q "resuming a run that stopped: 1 rows kept" "$T/resume.log" && [ "$(stat -c %Y "$T/out2/a/row.json")" = "$before" ] \
  && [ "$(wc -l < "$T/out2/gradebook.csv")" = 4 ] && [ ! -f "$T/out2/.stopped" ] \
  || { cat "$T/resume.log"; fail "the second run did not resume where the first stopped"; }
echo "check-batch: a full disk stops the run before the next submission; the same command resumes, the rows kept"

# Several GPUs (--gpus): the same class graded by one worker and by two on GPUs that do not exist
# (ATTNLAB_TEST_GPUS=2, the CPU task): every submission graded once, a crash and a hang cost only their own rows,
# the same rows as the serial run; a missing, doubled or busy GPU named before anything is graded.
P="$T/gpus" && mkdir -p "$P/subs"
for who in reference zeros crash hang broken printer; do mkdir -p "$P/subs/$who/task1/skeleton"; done
solution task1/reference/naive_mha.cpp "$P/subs/reference/task1/skeleton/naive_mha.cpp"
for c in zeros crash hang; do patch -s -o "$P/$c.cpp" task1/reference/naive_mha.cpp task1/controls/$c.patch \
  && solution "$P/$c.cpp" "$P/subs/$c/task1/skeleton/naive_mha.cpp"; done
sed 's/namespace task1 {/namespace task1 { this does not compile/' "$P/subs/reference/task1/skeleton/naive_mha.cpp" \
  > "$P/subs/broken/task1/skeleton/naive_mha.cpp"
cp -r "$T/subs/skeleton.tar.gz" "$P/subs/skeleton.tar.gz"
# a runner that prints without end: stopped at its log's 64 MB (SIGXFSZ), its row graded, the disk spared
/usr/bin/python3 - "$P/subs/reference/task1/skeleton/naive_mha.cpp" "$P/subs/printer/task1/skeleton/naive_mha.cpp" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
src = src.replace("namespace task1 {", '#include <cstdio>\nnamespace task1 {\nstatic void chatter() { for (;;) std::fputs("all work and no play\\n", stdout); }', 1)
body = re.search(r"^void naive_mha\([^)]*\)\s*\{", src, re.M)
open(sys.argv[2], "w").write(src[:body.end()] + "\n    chatter();" + src[body.end():])
PY
grep -q "chatter();" "$P/subs/printer/task1/skeleton/naive_mha.cpp" || fail "the printer sample was not written"
# for the class report: a failure two students share, and a file name that is HTML (it reaches the flags)
cp -r "$P/subs/zeros" "$P/subs/zeros_2" && touch "$P/subs/zeros/task1/skeleton/<img src=x onerror=alert(1)>.cpp"
for run in serial gpus; do mkdir -p "$P/$run" && cp -r "$T/out/.course" "$P/$run/"; done
export GRADER_SEED=20261125  # both runs draw the same fresh inputs
/usr/bin/python3 tools/class/batch_grade.py --submissions "$P/subs" --out "$P/serial" --tasks 1 --no-setup --case-timeout 5 \
  --history "$P/history.jsonl" > "$P/serial.log" 2>&1 \
  || { cat "$P/serial.log"; fail "the serial run failed"; }
ATTNLAB_TEST_GPUS=2 /usr/bin/python3 tools/class/batch_grade.py --submissions "$P/subs" --out "$P/gpus" --tasks 1 --no-setup \
  --case-timeout 5 --history "$P/history.jsonl" --gpus all > "$P/gpus.log" 2>&1 || { cat "$P/gpus.log"; fail "the run on two (test) GPUs failed"; }
unset GRADER_SEED
/usr/bin/python3 - "$P" <<'PY' || fail "grading on two GPUs differs from grading on one"
import csv, os, sys
P = sys.argv[1]
read = lambda run: {r["student"]: r for r in csv.DictReader(open(f"{P}/{run}/gradebook.csv"))}
serial, gpus = read("serial"), read("gpus")
bad = []
if sorted(serial) != sorted(gpus) or len(serial) != 8:
    bad.append(f"rows: serial {sorted(serial)}, on two GPUs {sorted(gpus)}")
for who in serial:
    a, b = dict(serial[who]), dict(gpus.get(who, {}))
    if b.get("gpu") not in ("GPU 0: test GPU (none: the CPU tasks only)", "GPU 1: test GPU (none: the CPU tasks only)"):
        bad.append(f"{who}: gpu column {b.get('gpu')!r}")
    a.pop("gpu"), b.pop("gpu", None)
    if a != b:
        bad.append(f"{who}: serial {a} but on two GPUs {b}")
    log = open(f"{P}/gpus/{who}/grade.log").read() if os.path.exists(f"{P}/gpus/{who}/grade.log") else ""
    if log.count("\ngrade: ") + log.startswith("grade: ") > 1:
        bad.append(f"{who}: graded more than once")
want = {"reference": lambda r: float(r["task1"]) == 2, "zeros": lambda r: 0 < float(r["task1"]) < 2,
        "zeros_2": lambda r: 0 < float(r["task1"]) < 2,
        "crash": lambda r: 0 < float(r["task1"]) < 2, "hang": lambda r: 0 < float(r["task1"]) < 2,
        "broken": lambda r: "does not build" in r["flags"], "skeleton": lambda r: float(r["total"]) == 0,
        "printer": lambda r: float(r["total"]) < 1 and r["sandbox"] == "bubblewrap"}  # the steps that do not call naive_mha pass
bad += [f"{who}: {gpus.get(who)}" for who, ok in want.items() if who not in gpus or not ok(gpus[who])]
if not os.path.exists(f"{P}/gpus/.node-window/window.lock"):
    bad.append("the workers shared no timing window (grader/node_window.h): .node-window/window.lock was never taken")
if "--node-window" not in open(f"{P}/gpus/reference/grade.log").read():
    bad.append("the reference's grader was not given the node's timing window (--node-window)")
used = {r["gpu"] for r in gpus.values() if r["gpu"]}
if len(used) != 2:
    bad.append(f"the two workers did not both grade: {used}")
res = open(f"{P}/gpus/reference/Results.md").read()
if "- graded on: GPU " not in res:
    bad.append("the reference's Results.md does not say which GPU graded it")
big = [(os.path.getsize(os.path.join(d, f)), os.path.join(d, f)) for run in ("serial", "gpus")
       for d, _, fs in os.walk(f"{P}/{run}/printer") for f in fs]
if max(big)[0] > 65 << 20:
    bad.append(f"the printer's log grew past 64 MB: {max(big)}")
if "SIGXFSZ" not in "".join(open(p, errors="replace").read() for _, p in big if p.endswith("results.json")):
    bad.append("the printer's cases do not say SIGXFSZ")
print("\n".join(bad) or "check-batch: two (test) GPUs graded the class as one does: 8 rows, each graded once, both workers used; "
      f"the printer stopped at {max(big)[0] >> 20} MB of log")
sys.exit(1 if bad else 0)
PY
for spec in "0,5|GPU 5 not on this host (it has: 0, 1)" "1,1|GPU 1 named twice" "all|GPU 1 (test GPU (none: the CPU tasks only)) is busy: pid 4242"; do
  ATTNLAB_TEST_GPUS=2 ATTNLAB_TEST_GPUS_BUSY=1 /usr/bin/python3 tools/class/batch_grade.py --submissions "$P/subs" --out "$P/refused" \
    --tasks 1 --no-setup --gpus "${spec%%|*}" > "$P/refused.log" 2>&1 && fail "--gpus ${spec%%|*} was accepted"
  grep -qF "${spec#*|}" "$P/refused.log" || { cat "$P/refused.log"; fail "--gpus ${spec%%|*} did not say: ${spec#*|}"; }
  [ ! -e "$P/refused/gradebook.csv" ] || fail "--gpus ${spec%%|*} graded something"
done
echo "check-batch: --gpus names a missing, doubled or busy GPU and grades nothing"
# --timing: alone (the default) gives every worker the node's one timing window; beside gives none
ATTNLAB_TEST_GPUS=2 /usr/bin/python3 - "$P/window" <<'PY' > "$P/timing.log" 2>&1 || { cat "$P/timing.log"; fail "--timing alone|beside does not set the workers' timing window"; }
import sys; sys.path.insert(0, "tools/class"); import batch_grade as b
alone, beside = b.make_workers("all", sys.argv[1]), b.make_workers("all", None)
assert len({w.window for w in alone}) == 1 and all("--node-window" in w.grader_args() for w in alone), [w.window for w in alone]
assert all(w.window is None and "--node-window" not in w.grader_args() for w in beside), [w.window for w in beside]
PY
echo "check-batch: --timing alone shares one timing window among the workers, beside gives none"

# The class report after two gradings (the serial run and the one on two test GPUs, one history), in a real browser;
# and the same check must fail on a report whose numbers, layout or privacy were broken.
command -v chromium-headless-shell >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
  chromium-headless-shell >/dev/null; } || fail "chromium-headless-shell (the report's browser test) could not be installed"
[ "$(grep -c '"student": "zeros"' "$P/history.jsonl")" = 2 ] || fail "the history does not hold both gradings"
/usr/bin/python3 tools/class/check_report.py "$P/gpus" --history "$P/history.jsonl" || fail "the class report failed in the browser"
grep -q "Failures the class shares</h2><table" "$P/gpus/report/index.html" || fail "the report does not show the failure zeros and zeros_2 share"
B="$P/broken-report" && rm -rf "$B" && cp -r "$P/gpus" "$B"
sed -i 's|zeros</a></td><td class="">0.62</td>|zeros</a></td><td class="">0.26</td>|g' "$B/report/index.html"
sed -i 's|<h2>Points</h2>|<h2>Points</h2><p>crash</p><p style="white-space:nowrap">'"$(printf 'wide%.0s' $(seq 1 200))"'</p>|' "$B/report/students/zeros.html"
/usr/bin/python3 tools/class/check_report.py "$B" --history "$P/history.jsonl" > "$B.log" 2>&1 && fail "a broken report passed"
for want in "zeros's points" "zeros.html: layout: page wider" "zeros.html: names another student, 'crash'"; do
  grep -qF "$want" "$B.log" || { cat "$B.log"; fail "the browser check did not say: $want"; }; done
echo "check-batch: the browser check fails a report with a wrong number, a cut line and another student's name"
out=$(/usr/bin/python3 tools/class/test_class_report.py) || { echo "$out"; fail "the report's speed parts (leaderboards, speed jumps)"; }
echo "check-batch: $(tail -n 1 <<<"$out")"

# A compile-time time bomb (a million class templates: about 13 s and 2 GB, under the memory cap) against a build time
# limit of 5 s (--timeout): stopped, and its row says why.
mkdir -p "$T/subs4/timebomb/task1/skeleton" "$T/out4" && cp -r "$T/out/.course" "$T/out4/" \
  && solution task1/reference/naive_mha.cpp "$T/subs4/timebomb/task1/skeleton/naive_mha.cpp" \
  && cat >> "$T/subs4/timebomb/task1/skeleton/naive_mha.cpp" <<'CPP'
template <int N, long M> struct Tree { static constexpr long v = Tree<N - 1, 2 * M>::v + Tree<N - 1, 2 * M + 1>::v; };
template <long M> struct Tree<0, M> { static constexpr long v = M & 1; };
static_assert(Tree<20, 0>::v > 0, "a million class templates");
CPP
/usr/bin/python3 tools/class/batch_grade.py --submissions "$T/subs4" --out "$T/out4" --tasks 1 --no-setup --no-report --timeout 5 \
  > "$T/timebomb.log" 2>&1 || { cat "$T/timebomb.log"; fail "the time-bomb run failed"; }
grep -qF 'timebomb,0.0,0.0,the build took more than 5 s (--timeout): a compile-time bomb?' "$T/out4/gradebook.csv" \
  || { cat "$T/out4/gradebook.csv"; fail "the time bomb was not stopped by the build's time limit"; }
echo "check-batch: a compile-time time bomb is stopped at the build's time limit, its row says so"

# Gradescope: the entry point on one submission.
G="$T/gradescope"
mkdir -p "$G" && ln -sfn "$PWD" "$G/source" && cp -r "$T/subs/reference" "$G/submission"
AUTOGRADER_ROOT="$G" bash tools/class/gradescope/run_autograder >/dev/null 2>&1
/usr/bin/python3 -c "import json,sys; r=json.load(open('$G/results/results.json')); sys.exit(0 if round(r['score'], 2) >= 5 and r['tests'] else 1)" \
  || fail "the Gradescope entry did not produce a full results.json"
echo "check-batch: the Gradescope entry graded a submission into results/results.json"
