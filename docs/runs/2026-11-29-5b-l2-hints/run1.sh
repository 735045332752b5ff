#!/bin/bash
# Call 1: 5b's decode with L2 hints on its cp.async loads (hints.patch, DIAG_HINT = 0 … 4: none, .L2::128B, .L2::256B,
# an evict_first policy, both 256B and evict_first), each build's bench_task5_paged, three rounds in turn at MQA, B = 1,
# the ragged batch, B = 64 and B = 8 (--shape 4 3 6 0 1).
tar -C /tmp -xJf carry/hint.tar.xz   # → /tmp/hint/bench_h0 … bench_h4
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 60 /tmp/hint/bench_$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
start=$SECONDS
for r in 1 2 3; do
  for shape in 4 3 6 0 1; do for b in h0 h1 h2 h3 h4; do run $b $shape; done; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 330 ] && break
done
