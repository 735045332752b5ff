#!/usr/bin/env bash
# 5b diag: an L2 bulk prefetch DIAG_PF tiles beyond the cp.async pipeline (MQA only, or every row with DIAG_PF_ALL).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=carry/pf/bench_pf
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
row() { grep -E "pages of 64|contiguous|compact" "$1" | head -3 | awk '{for(i=1;i<=NF;i++) if($i=="ms") {print $(i-1), $(i+4)}}' | tr '\n' ' '; }
for r in 1 2 3; do
  for pf in 0 2 4 8 16; do
    t0=$(date +%s.%N); DIAG_PF=$pf timeout -s KILL 60 $B --shape 4 > /tmp/mqa_pf${pf}_r$r.log 2>&1; rc=$?
    echo "r$r MQA pf=$pf rc=$rc $(row /tmp/mqa_pf${pf}_r$r.log) [$(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5)s]"
  done
  for s in 3 6 0; do for pf in 0 4 8; do
    DIAG_PF_ALL=1 DIAG_PF=$pf timeout -s KILL 90 $B --shape $s > /tmp/s${s}_pf${pf}_r$r.log 2>&1; rc=$?
    echo "r$r shape$s pf=$pf(all) rc=$rc $(row /tmp/s${s}_pf${pf}_r$r.log)"
  done; done
done 2>&1 | tee "$OUT/summary.txt"
cat /tmp/mqa_*.log > "$OUT/mqa_all.log"; cat /tmp/s*_pf*.log > "$OUT/others_all.log"
