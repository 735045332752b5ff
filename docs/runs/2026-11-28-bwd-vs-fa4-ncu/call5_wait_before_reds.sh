#!/usr/bin/env bash
# call 5: wait_before_reds_diag.patch (bwd_we: each next query tile's Q/dO waited for after dQ's wgmma, before dQ's reds,
# instead of at the tile's start, where ncu found the warps waiting on the reds' registers) against the kept build
# (bwd_kept, eea467c's benchmark), float64 checks at ragged shapes, three rounds in turn at four shapes.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,5,1024,128 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=16,8,777,64"
timeout -s KILL 90 $E/bwd_we $R > "$OUT/logs/we_ragged.log" 2>&1
echo "we ragged rc=$? $(grep -c ' ok$' "$OUT/logs/we_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/we_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
for r in 1 2 3; do for sh in 4,16,4096,128 16,16,1024,128 4,32,4096,64 16,32,1024,64; do for b in kept we; do
  timeout -s KILL 40 $E/bwd_$b --shape=$sh > "$OUT/logs/${b}_${sh//,/x}_r$r.log" 2>&1 || echo "$b $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done; done
for sh in 4x16x4096x128 16x16x1024x128 4x32x4096x64 16x32x1024x64; do
  mkdir -p /tmp/cmp_$sh; for f in "$OUT"/logs/*_${sh}_r*.log; do b=$(basename $f); cp $f /tmp/cmp_$sh/${b/_${sh}/}; done
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$sh kept we | tee -a "$OUT/summary.txt"
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
