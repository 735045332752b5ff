#!/usr/bin/env bash
# 5b: does a launch's parameter size cost the decode time? The reference with its table and items in the smallest of
# four parameter sizes that holds them (default) against the largest (30 KB) always (ATTNLAB_DIAG_BIG_PARAMS=1);
# shapes 0 (B = 64), 3 (B = 1), 4 (MQA), each its own process, three rounds in turn
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
for r in 1 2 3; do for s in 0 3 4; do
  timeout 60 ./carry/k6/bench_diag --shape $s > "$OUT/small_s${s}_$r.log" 2>&1
  ATTNLAB_DIAG_BIG_PARAMS=1 timeout 60 ./carry/k6/bench_diag --shape $s > "$OUT/big_s${s}_$r.log" 2>&1
done; done
for v in small big; do echo "== $v"; for s in 0 3 4; do for r in 1 2 3; do grep -E "^B=" "$OUT/${v}_s${s}_$r.log" | head -2 | sed 's/  */ /g; s/ GB\/s.*host inside:/ | sync:/; s/ of a copy timed so.*//' | cut -c1-110; done; done; done
