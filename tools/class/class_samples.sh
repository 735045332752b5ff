#!/usr/bin/env bash
# class_samples.sh DIR — five sample submissions of a class, for a class-grading run on a GPU:
#   reference  every task solved (the model solutions as a student writes them: no #if SOLUTION)
#   skeleton   the kit as handed out
#   partial    Tasks 1–3 solved, the GPU tasks untouched
#   slow       every task solved, but Task 4's and Task 5's kernels do their work four times
#              (correct, about 4× the reference's time: partial speed credit)
#   broken     every task solved, Task 4's file does not compile
# Staff material (it reads the reference solutions). See docs/grader.md (Runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
make --no-print-directory setup SETUP_TASKS=none >&2  # as `make taskN`: the packages (unifdef)
OUTDIR=${1:?usage: class_samples.sh DIR}
rm -rf "$OUTDIR" && mkdir -p "$OUTDIR"
# A solution as a student hands it in: one file, with the reference's own headers (taskN/reference/*.cuh) pasted in,
# and the ladder's (4b's Hopper path is rung 10 of the bf16 ladder: task4_bf16/ladder/*.cuh), each once, nested ones too.
inline_reference_headers() {
  /usr/bin/python3 -c '
import re, sys
seen = set()
def paste(lines):
    for line in lines:
        m = re.match(r"#include \"(task[0-9]+(_[a-z0-9]+)*/(reference|ladder)/[^\"]+)\"", line)
        if not m:
            sys.stdout.write(line)
        elif m.group(1) not in seen:
            seen.add(m.group(1))
            paste(l for l in open(m.group(1)) if not l.startswith("#pragma once"))
paste(sys.stdin)'
}
folders() {  # folders N: task N's folders (Task 4's bonus parts too: the Makefile's TASK4_PARTS)
  /usr/bin/python3 -c "import sys; sys.path.insert(0, 'tools/ci'); from task_folders import task_folders; print(' '.join(task_folders($1)))"
}
solve() {  # solve STUDENT TASK...: the model solutions of these tasks into STUDENT's skeleton folders
  local who=$1 f d; shift
  for t in "$@"; do
    for d in $(folders "$t"); do
      mkdir -p "$OUTDIR/$who/$d/skeleton"
      for f in $d/reference/*.cpp $d/reference/*.cu; do
        [ -e "$f" ] || continue
        { unifdef -DSOLUTION=1 "$f" || [ $? -le 1 ]; } | inline_reference_headers > "$OUTDIR/$who/$d/skeleton/$(basename "$f")"
      done
    done
  done
}
solve reference 1 2 3 4 5 6
mkdir -p "$OUTDIR/skeleton"
for t in 1 2 3 4 5 6; do for d in $(folders "$t"); do mkdir -p "$OUTDIR/skeleton/$d" && cp -r $d/skeleton "$OUTDIR/skeleton/$d/"; done; done
solve partial 1 2 3
solve slow 1 2 3 4 5 6
sed -i 's|^    flash_forward_with(tuned_config(D), q, k, v, o, B, H, Sq, Sk, D, causal);|    for (int rep = 0; rep < 4; ++rep) flash_forward_with(tuned_config(D), q, k, v, o, B, H, Sq, Sk, D, causal);|' \
  "$OUTDIR/slow/task4/skeleton/flash_attention.cu"
sed -i 's|^    decode_attention_with_splits(q, k_cache, v_cache, o, B, H, max_seq, len, D, len >= 1 ? choose_splits(B \* H, len) : 1);|    for (int rep = 0; rep < 4; ++rep) decode_attention_with_splits(q, k_cache, v_cache, o, B, H, max_seq, len, D, len >= 1 ? choose_splits(B * H, len) : 1);|' \
  "$OUTDIR/slow/task5/skeleton/decode.cu"
grep -q "rep < 4" "$OUTDIR/slow/task4/skeleton/flash_attention.cu" && grep -q "rep < 4" "$OUTDIR/slow/task5/skeleton/decode.cu" \
  || { echo "class_samples: the slow variants did not apply"; exit 1; }
solve broken 1 2 3 4 5 6
sed -i 's|^namespace task4 {|namespace task4 { this does not compile|' "$OUTDIR/broken/task4/skeleton/flash_attention.cu"
echo "class_samples: wrote $(ls "$OUTDIR" | tr '\n' ' ')in $OUTDIR"
