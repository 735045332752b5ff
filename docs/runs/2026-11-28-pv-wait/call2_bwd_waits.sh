#!/usr/bin/env bash
# call 2: 4d's key-tile kernel, three diagnostic builds against the build before (bwd_base), each checked in float64
# at 13 ragged shapes, then three rounds in turn at issue 31's six shapes (causal and not):
#   bwd_dk   -DDIAG_DK_UNDER_NEXT: no wait for dK at a tile's end; the next tile's first wait covers it
#   bwd_dv   -DDIAG_DV_FIRST: dV += Pᵀ·dO issued before dPᵀ is waited for, so it runs while dS is computed
#   bwd_both both
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64"
for b in dk dv both; do
  timeout -s KILL 90 $E/bwd_$b $R > "$OUT/logs/${b}_ragged.log" 2>&1
  echo "$b ragged rc=$? $(grep -c ' ok$' "$OUT/logs/${b}_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/${b}_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
done
for r in 1 2 3; do for b in base dk dv both; do
  timeout -s KILL 60 $E/bwd_$b $S > "$OUT/logs/${b}_r$r.log" 2>&1 || echo "bwd $b r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" base dk dv both | tee -a "$OUT/summary.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
