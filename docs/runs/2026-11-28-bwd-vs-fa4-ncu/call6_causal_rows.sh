#!/usr/bin/env bash
# call 6: causal_rows_diag.patch (bwd_br: DIAG_CAUSAL_MIN_SQ80 says from how many rows a causal call at D = 128 takes
# 80-row query tiles; 2,048 as kept) — 64-row tiles (as kept) against 80 (DIAG_CAUSAL_MIN_SQ80=0), three rounds in turn.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,2,81,128 --shape=2,3,127,128 --shape=1,2,1000,128 --shape=3,5,1024,128 --shape=8,24,1000,128"
DIAG_CAUSAL_MIN_SQ80=0 timeout -s KILL 60 $E/bwd_br $R > "$OUT/logs/r80_ragged.log" 2>&1
echo "80 rows ragged rc=$? $(grep -c ' ok$' "$OUT/logs/r80_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/r80_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
for r in 1 2 3; do for sh in 16,16,1024,128 16,16,1000,128 8,16,1536,128; do
  t=${sh//,/x}
  timeout -s KILL 40 $E/bwd_br --shape=$sh > "$OUT/logs/r64_${t}_r$r.log" 2>&1 || echo "64 $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
  DIAG_CAUSAL_MIN_SQ80=0 timeout -s KILL 40 $E/bwd_br --shape=$sh > "$OUT/logs/r80_${t}_r$r.log" 2>&1 || echo "80 $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
for t in 16x16x1024x128 16x16x1000x128 8x16x1536x128; do
  mkdir -p /tmp/cmp_$t; for b in r64 r80; do for r in 1 2 3; do cp "$OUT/logs/${b}_${t}_r$r.log" /tmp/cmp_$t/${b}_r$r.log; done; done
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$t r64 r80 | tee -a "$OUT/summary.txt"
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
