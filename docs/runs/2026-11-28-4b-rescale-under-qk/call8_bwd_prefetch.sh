#!/usr/bin/env bash
# call 8: 4d's key-tile kernel with an L2 prefetch (cp.async.bulk.prefetch.tensor) of the K and V tiles (DIAG_PF_ROWS=1: and
# the first Q and dO tile) of the block DIAG_PF_AHEAD blocks later in launch order, issued by each block at its start
# (bwd_prefetch_next_block_diag.patch, -DDIAG_PF_NEXT), against the kept build (bench_bwd_head); three rounds in turn.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/fb.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
for r in 1 2 3; do
  timeout -s KILL 60 carry/fb/bench_bwd_head > "$OUT/logs/bwd_head_r$r.log" 2>&1 || echo "head r$r rc=$?"
  DIAG_PF_AHEAD=132 DIAG_PF_ROWS=1 timeout -s KILL 60 carry/fb/bench_bwd_pf > "$OUT/logs/bwd_a132r1_r$r.log" 2>&1 || echo "a132r1 r$r rc=$?"
  DIAG_PF_AHEAD=264 DIAG_PF_ROWS=1 timeout -s KILL 60 carry/fb/bench_bwd_pf > "$OUT/logs/bwd_a264r1_r$r.log" 2>&1 || echo "a264r1 r$r rc=$?"
  DIAG_PF_AHEAD=132 DIAG_PF_ROWS=0 timeout -s KILL 60 carry/fb/bench_bwd_pf > "$OUT/logs/bwd_a132r0_r$r.log" 2>&1 || echo "a132r0 r$r rc=$?"
done
grep -il "mismatch\|fail" "$OUT"/logs/*.log
for v in head a132r1 a264r1 a132r0; do echo "== $v"; for r in 1 2 3; do grep -o "[0-9.]* TFLOP/s" "$OUT/logs/bwd_${v}_r$r.log" | awk '{printf "%s ", $1}'; echo; done; done
head -30 "$OUT/logs/bwd_head_r1.log"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
