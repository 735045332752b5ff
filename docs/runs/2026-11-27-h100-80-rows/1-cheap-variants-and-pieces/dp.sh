#!/usr/bin/env bash
# 5b's split of each sequence into pieces, forced (DIAG_PIECES=n, a diagnostic build) against the plan's own choice
set -uo pipefail
OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT"
mkdir -p carry/dp && tar -C carry/dp -xJf carry/dp.tar.xz
for r in 1 2; do
  for sh in 4 0 3 6; do
    for n in plan 1 2 4; do
      if [ $n = plan ]; then timeout 60 carry/dp/bench_task5_paged --shape $sh > /tmp/o.log 2>&1; else DIAG_PIECES=$n timeout 60 carry/dp/bench_task5_paged --shape $sh > /tmp/o.log 2>&1; fi
      echo "shape $sh pieces=$n run $r: $(grep -E '^B=' /tmp/o.log | head -2 | sed 's/  */ /g' | cut -c1-105 | tr '\n' '|')" | tee -a "$OUT/pieces.log"
    done
  done
done
