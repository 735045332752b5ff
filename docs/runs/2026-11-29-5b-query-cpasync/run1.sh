#!/bin/bash
# Call 1: MQA's stream gap. decode_loads (the loads alone, standalone); the reference build L0 at 3 (plan), 4, 5, 6
# stages (DIAG_STAGES; ≥ 4 stages: one block an SM, one piece a sequence at MQA); L1 no arithmetic no epilogue; L2 + no
# query prologue; L3 + the contiguous row's table by arithmetic; L4 + plain cp.async. In turn, rounds while time lasts.
start=$SECONDS
D=/tmp/dd; mkdir -p $D && tar -C $D -xJf carry/d1.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
export DIAG_NOCHECK=1
$D/decode_loads > $OUT/decode_loads.log 2>&1
run() { echo "== $1 shape=$2 $3" >> $OUT/ab.log; env $3 timeout 60 $D/bench_$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do
  for shape in 4; do
    for L in L0 L1 L2 L3 L4; do run $L $shape DIAG_X=0; done
    for st in 4 5 6; do run L0 $shape DIAG_STAGES=$st; done
  done
  for shape in 3 6 0; do for st in 0 5 6; do run L0 $shape DIAG_STAGES=$st; done; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 330 ] && break
done
$D/decode_loads > $OUT/decode_loads2.log 2>&1
