#!/usr/bin/env bash
# call 3: 176-key tiles at D = 128 without a mask (Q from shared memory, O stored from the registers), now with P·V's
# wait held after the softmax (fwd_wide, DIAG_BC=176) and without it (fwd_nohold, DIAG_BC=176), against the kept
# 128-key kernel (fwd_wide without DIAG_BC; the kept build's D = 128 path); ragged checks first, then three rounds.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,3,177,128 --shape=2,2,1000,128 --shape=1,2,4100,128 --shape=3,1,353,128 --shape=1,1,1,128"
for b in wide nohold; do
  DIAG_BC=176 timeout -s KILL 120 $E/fwd_$b $R > "$OUT/logs/${b}_ragged.log" 2>&1
  echo "$b ragged rc=$? $(grep -c ' ok$' "$OUT/logs/${b}_ragged.log") ok, $(grep -ci 'mismatch\|FAIL' "$OUT/logs/${b}_ragged.log") failed" | tee -a "$OUT/summary.txt"
done
S="--shape=4,16,4096,128 --shape=2,16,8192,128 --shape=1,16,16384,128"
for r in 1 2 3; do
  timeout -s KILL 100 $E/fwd_wide $S > "$OUT/logs/kept_r$r.log" 2>&1
  DIAG_BC=176 timeout -s KILL 100 $E/fwd_wide $S > "$OUT/logs/k176hold_r$r.log" 2>&1
  DIAG_BC=176 timeout -s KILL 100 $E/fwd_nohold $S > "$OUT/logs/k176_r$r.log" 2>&1
done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" kept k176hold k176 | tee -a "$OUT/summary.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
