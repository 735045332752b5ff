#!/bin/bash
# 10c with 192-key tiles (P through shared memory) against 128-key tiles: correctness, then speed in turns.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
DIAG_10C_BC=192 ./check_ladder_task4_bf16 10c > $OUT/check192.log 2>&1; echo "check192 rc=$?" >> $OUT/check192.log
tail -3 $OUT/check192.log
SH="--shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,32,1024,64 --shape=4,16,4096,64 --shape=2,32,8192,64"
for r in 1 2; do
  for bc in 128 192; do
    DIAG_10C_BC=$bc ./ladder_task4_bf16 --only=10c $SH > $OUT/bench_${bc}_r$r.log 2>&1
    echo "== bc $bc round $r"; grep -i "10c\|TFLOP" $OUT/bench_${bc}_r$r.log | head -30
  done
done
