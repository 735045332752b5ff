#!/usr/bin/env bash
# 10b against 10c (and the entry point) at D = 64, causal and not, two passes
OUT=${OUT:-build/o}; mkdir -p $OUT
S=""
for s in 2,6,4096,64 1,32,4096,64 4,16,4096,64 4,32,4096,64 8,32,4096,64 4,32,2048,64 16,32,2048,64 2,32,8192,64 1,32,16384,64; do S="$S --shape=$s"; done
nvidia-smi --query-gpu=name --format=csv,noheader
for pass in 1 2; do
  timeout 250 carry/lad/ladder_task4_bf16 --only=10b,10c,flash $S > $OUT/ladder_pass$pass.log 2>&1
  echo "pass $pass exit $?"
done
grep -E "^B=|10b|10c|flash_attention" $OUT/ladder_pass1.log | head -80 | cut -c1-100
