#!/bin/bash
# Call 5: an L2 prefetch of the tile DIAG_PF (1, 2) beyond the cp.async pipeline (prefetch.global.L2, one thread a
# 128-byte line, pages ≥ 64) against the kept build (base, 0787329's code), in turn at MQA, B = 1, ragged, B = 64.
start=$SECONDS
D=/tmp/d5; tar -C /tmp -xJf carry/d5.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 60 $D/bench_$1 --shape $2 2>&1 | grep -E "ms |rror" | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do
  for shape in 4 3 6 0; do for v in base pf1 pf2; do run $v $shape; done; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 300 ] && break
done
