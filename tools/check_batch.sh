#!/usr/bin/env bash
# check_batch.sh — batch grading of a class on sample submissions (a solution with stray files, the
# skeleton as a tarball, a zeros control, one that does not compile, one that edits the harness, and
# five attempts at the model solution: a link, a link in an archive, an escaping include, an include
# by name with SOLUTION defined, a computed include): the right gradebook; the Slurm script's
# content; one array element's command run here and merged; the Gradescope entry on one submission.
# Run by `make test`. CPU tasks only where there is no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
T=build/batch-test
rm -rf "$T" && mkdir -p "$T/subs"
fail() { echo "check-batch: $*"; exit 1; }
sub() { mkdir -p "$T/subs/$1/task1/skeleton" "$T/subs/$1/task3/skeleton"; }
solution() { unifdef -DSOLUTION=1 "$1" > "$2"; test $? -le 1; }  # a solution as a student writes it: no #if SOLUTION
sub reference && solution task1/reference/naive_mha.cpp "$T/subs/reference/task1/skeleton/naive_mha.cpp" \
  && solution task3/reference/flash_cpu.cpp "$T/subs/reference/task3/skeleton/flash_cpu.cpp" \
  && echo "not a course file" > "$T/subs/reference/task1/skeleton/notes.txt" \
  && echo "int x;" > "$T/subs/reference/task1/skeleton/evil;rm -rf ~.cpp"
sub zeros && patch -s -o "$T/zeros.cpp" task1/reference/naive_mha.cpp task1/controls/zeros.patch \
  && solution "$T/zeros.cpp" "$T/subs/zeros/task1/skeleton/naive_mha.cpp"
sub broken && solution task1/reference/naive_mha.cpp "$T/broken.cpp" \
  && sed 's/namespace task1 {/namespace task1 { this does not compile/' "$T/broken.cpp" > "$T/subs/broken/task1/skeleton/naive_mha.cpp"
sub editor && solution task1/reference/naive_mha.cpp "$T/subs/editor/task1/skeleton/naive_mha.cpp" && mkdir -p "$T/subs/editor/common" \
  && patch -s -o "$T/subs/editor/common/compare.cpp" common/compare.cpp grader/controls/harness_compare_always_passes.patch \
  && for f in $(sed 's/^[0-9a-f]*  //' grader/protected.sha256 | grep -v '^common/compare.cpp$'); do mkdir -p "$T/subs/editor/$(dirname "$f")"; cp "$f" "$T/subs/editor/$f"; done
# Attempts at the model solution: a link to it, an escaping #include of it, an #include by its name
# with SOLUTION defined (the build tree has no reference sources), a computed #include.
sub linker && ln -s "$PWD/task1/reference/naive_mha.cpp" "$T/subs/linker/task1/skeleton/naive_mha.cpp"
sub escaper && printf '#define SOLUTION 1\n#include "../reference/naive_mha.cpp"\n' > "$T/subs/escaper/task1/skeleton/naive_mha.cpp"
sub namer && printf '#define SOLUTION 1\n#include "task1/reference/naive_mha.cpp"\n' > "$T/subs/namer/task1/skeleton/naive_mha.cpp"
sub macro && printf '#define REF "task1/reference/naive_mha.cpp"\n#include REF\n' > "$T/subs/macro/task1/skeleton/naive_mha.cpp"
mkdir -p "$T/skel/student/task1/skeleton" && cp task1/skeleton/naive_mha.cpp "$T/skel/student/task1/skeleton/" \
  && tar -C "$T/skel" -czf "$T/subs/skeleton.tar.gz" student
# an archive whose member is a link to the model solution
mkdir -p "$T/tarlink/student/task1/skeleton" && ln -s "$PWD/task1/reference/naive_mha.cpp" "$T/tarlink/student/task1/skeleton/naive_mha.cpp" \
  && tar -C "$T/tarlink" -czf "$T/subs/tarlink.tar.gz" student

/usr/bin/python3 tools/batch_grade.py --submissions "$T/subs" --out "$T/out" --timeout 900 || fail "batch_grade failed"
/usr/bin/python3 - "$T/out/gradebook.csv" <<'PY' || fail "wrong gradebook"
import csv, sys
rows = {r["student"]: r for r in csv.DictReader(open(sys.argv[1]))}
sandboxed = lambda r: r["sandbox"] in ("bubblewrap", "uid 65534")
want = {"reference": lambda r: float(r["task1"]) == 2 and float(r["task3"]) == 3 and float(r["total"]) >= 5 and sandboxed(r)
                               and "ignored: 'task1/skeleton/notes.txt'" in r["flags"] and "evil;rm -rf ~.cpp" in r["flags"],
        "skeleton": lambda r: float(r["total"]) == 0 and not r["flags"],
        "zeros": lambda r: 0 < float(r["task1"]) < 2 and float(r["task3"]) == 0,
        "broken": lambda r: float(r["total"]) == 0 and "does not build" in r["flags"],
        "editor": lambda r: float(r["total"]) == 0 and "harness edited: common/compare.cpp" in r["flags"],
        "linker": lambda r: float(r["total"]) == 0 and "refused: a symbolic link" in r["flags"],
        "escaper": lambda r: float(r["total"]) == 0 and "refused: task1/skeleton/naive_mha.cpp:2: #include of '../reference/naive_mha.cpp'" in r["flags"],
        "namer": lambda r: float(r["total"]) == 0 and "does not build" in r["flags"],
        "macro": lambda r: float(r["total"]) == 0 and "computed #include" in r["flags"],
        "tarlink": lambda r: float(r["total"]) == 0 and "refused: a link in the archive" in r["flags"]}
bad = [f"{k}: {rows.get(k)}" for k, ok in want.items() if k not in rows or not ok(rows[k])]
print("\n".join(bad) or f"check-batch: gradebook right for {len(rows)} submissions")
sys.exit(1 if bad else 0)
PY

# Slurm: the script, then array element 0 run here with the command it holds, then the merge.
/usr/bin/python3 tools/batch_grade.py --submissions "$T/subs" --out "$T/slurm" --slurm >/dev/null || fail "no slurm script"
S="$T/slurm/grade_array.sbatch"
for want in "#SBATCH --array=0-9" "#SBATCH --gres=gpu:h100:1" '--index "$SLURM_ARRAY_TASK_ID"'; do
  grep -qF -- "$want" "$S" || fail "the Slurm script lacks: $want"
done
SLURM_ARRAY_TASK_ID=1 bash -c "$(grep -E '^/usr/bin/python3 ' "$S")" >/dev/null || fail "array element 1 failed"  # editor
/usr/bin/python3 tools/batch_grade.py --collect --out "$T/slurm" >/dev/null
diff <(grep '^editor,' "$T/out/gradebook.csv") <(grep '^editor,' "$T/slurm/gradebook.csv") >/dev/null \
  || fail "array element 1 (editor) merged differently from the batch run"
echo "check-batch: Slurm script right; array element 1 run here and merged into the same row"

# Gradescope: the entry point on one submission.
G="$T/gradescope"
mkdir -p "$G" && ln -sfn "$PWD" "$G/source" && cp -r "$T/subs/reference" "$G/submission"
AUTOGRADER_ROOT="$G" bash tools/gradescope/run_autograder >/dev/null 2>&1
/usr/bin/python3 -c "import json,sys; r=json.load(open('$G/results/results.json')); sys.exit(0 if round(r['score'], 2) >= 5 and r['tests'] else 1)" \
  || fail "the Gradescope entry did not produce a full results.json"
echo "check-batch: the Gradescope entry graded a submission into results/results.json"
