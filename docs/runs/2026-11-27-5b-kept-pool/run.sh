#!/usr/bin/env bash
# kept pool for bench_task5_paged's buffers: the part's tests, then the benchmark with the pool and with --cudamalloc, in turn
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -x /usr/bin/bwrap ] || install -m 755 carry/k1/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$PWD/carry/k1/null
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
timeout 200 ./carry/k1/task5_paged > "$OUT/t5b_reference.log" 2>&1; echo "tests rc=$?"; tail -n 3 "$OUT/t5b_reference.log"
for r in 1 2; do
  timeout 150 ./carry/k1/bench_task5_paged > "$OUT/bench_kept_$r.log" 2>&1; echo "kept $r rc=$?"
  timeout 150 ./carry/k1/bench_task5_paged --cudamalloc > "$OUT/bench_cudamalloc_$r.log" 2>&1; echo "cudamalloc $r rc=$?"
done
for f in "$OUT"/bench_*.log; do echo "== $f"; grep -E "^B=" "$f" | grep -v "^B=.*f32" | sed 's/  */ /g; s/ of a copy of the same bytes.*//' | cut -c1-90 | head -16; done
