#!/bin/bash
# Consumers whose rows all lie past Sq skip their work (DIAG_SKIP_IDLE=1) against the kept kernel: checks, then speed in turns.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
DIAG_SKIP_IDLE=1 ./check_ladder_task4_bf16 10b 10c ref > $OUT/check_skip.log 2>&1; echo "check rc=$?" >> $OUT/check_skip.log
tail -2 $OUT/check_skip.log; grep -c " ok$" $OUT/check_skip.log; grep -v " ok$" $OUT/check_skip.log | grep -i "fail\|error" | head
SH="--shape=4,32,4096,64 --shape=1,32,16384,64 --shape=4,16,4096,64 --shape=2,32,8192,64 --shape=4,16,2048,64 --shape=16,32,1024,64"
for r in 1 2; do
  for sk in 0 1; do
    DIAG_SKIP_IDLE=$sk ./ladder_task4_bf16 --only=10b,10c,reference $SH > $OUT/bench_skip${sk}_r$r.log 2>&1
    echo "== skip $sk round $r"; awk '/^B=/{sh=$1" "$2" "$3" "$4" "($5=="causal"?"c":"n")} /TFLOP\/s =/{for(i=1;i<=NF;i++) if($i=="TFLOP/s" && $(i+1)=="=") v=$(i-1); printf "%s %s %s\n", sh, $1, v}' $OUT/bench_skip${sk}_r$r.log
  done
done
