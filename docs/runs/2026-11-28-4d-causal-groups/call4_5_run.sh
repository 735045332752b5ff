#!/usr/bin/env bash
# 4d: causal head groups of about one wave, a power of two (bench_new) against the kept build, three rounds in turn
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
E=carry/e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64"
timeout -s KILL 90 $E/bench_new $R > "$OUT/logs/new_ragged.log" 2>&1; echo "new ragged rc=$? $(grep -c ' ok$' "$OUT/logs/new_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/new_ragged.log") mismatch"
for r in 1 2 3; do for b in ref new; do
  timeout -s KILL 60 $E/bench_$b $S > "$OUT/logs/bwd_${b}_r$r.log" 2>&1 || echo "bwd $b r$r rc=$?"
done; done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
