#!/bin/bash
# Rung 10b against 10c with idle consumers skipping (the kept change) at D = 64 over many shapes: where three consumers pay.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
./check_ladder_task4_bf16 10b 10c ref > $OUT/check.log 2>&1; echo "check rc=$?" >> $OUT/check.log; tail -2 $OUT/check.log
SH=""
for s in 1,16,1024 2,16,1024 4,16,1024 8,16,1024 16,16,1024 1,16,2048 2,16,2048 8,16,2048 16,16,2048 1,8,4096 1,16,4096 2,16,4096 1,8,8192 1,4,16384 4,16,512 16,16,512 64,16,512 4,16,600 4,16,1500 4,16,3000 4,16,1100 2,16,4100 4,32,4096 16,32,1024; do SH="$SH --shape=$s,64"; done
for r in 1 2; do
  ./ladder_task4_bf16 --only=10b,10c $SH > $OUT/bench_r$r.log 2>&1
  echo "== round $r"; awk '/^B=/{sh=$1" "$2" "$3" "($5=="causal"?"c":"n")} /TFLOP\/s =/{for(i=1;i<=NF;i++) if($i=="TFLOP/s" && $(i+1)=="=") v=$(i-1); printf "%s %s %s\n", sh, $1, v}' $OUT/bench_r$r.log | sort | paste - - 
done
