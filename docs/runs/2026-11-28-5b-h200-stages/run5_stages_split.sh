#!/usr/bin/env bash
# 5b diag: stages (DIAG_STAGES) and a finer split (DIAG_SPLIT=k: k times the plan's pieces) at B = 1, ragged, B = 64.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=carry/r3/bench_diag
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
row() { grep -E "pages of 64" "$1" | head -1 | awk '{for(i=1;i<=NF;i++) if($i=="ms") {print $(i-1), $(i+4)}}' | tr '\n' ' '; }
for r in 1 2 3; do for s in 3 6 0; do for v in "3 1" "4 1" "3 2" "4 2"; do set -- $v
  DIAG_STAGES=$1 DIAG_SPLIT=$2 timeout -s KILL 60 $B --shape $s > /tmp/s${s}_$1_$2_r$r.log 2>&1
  echo "r$r shape$s stages=$1 split=$2 rc=$? $(row /tmp/s${s}_$1_$2_r$r.log)"
done; done; done | tee "$OUT/summary.txt"
