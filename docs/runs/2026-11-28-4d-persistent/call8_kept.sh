#!/usr/bin/env bash
# call 8: the kept form (persistent_d64.patch rewritten so that the non-persistent kernels compile to the same SASS as
# before, instruction for instruction: `if constexpr` around everything persistent; the persistent kernel is new code),
# binaries from tools/gpu/pack_gpu.sh (PACK_CONTROLS="task4d_calibration_rung1" PACK_EXPLOITS=""), against bwd_base:
# float64 checks at 16 ragged shapes, three rounds in turn at 16·32·1024·64 (causal and not), 4d's tests on the reference.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
mkdir -p /tmp/x build && tar -C /tmp -xJf carry/x.tar.xz && tar -C build -xJf carry/gpu.tar.xz; E=/tmp/x
cp build/carry/reference/bench_task4_bf16_backward $E/bwd_kept
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64 --shape=8,24,1000,128 --shape=16,8,777,64 --shape=5,9,1024,64"
timeout -s KILL 60 $E/bwd_kept $R > "$OUT/logs/kept_ragged.log" 2>&1
echo "kept ragged rc=$? $(grep -c ' ok$' "$OUT/logs/kept_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/kept_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
for r in 1 2 3; do for b in base kept; do
  timeout -s KILL 30 $E/bwd_$b --shape=16,32,1024,64 > "$OUT/logs/${b}_r$r.log" 2>&1 || echo "$b r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" base kept | tee -a "$OUT/summary.txt"
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners PYTHONUNBUFFERED=1
timeout 60 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/goldens.log" 2>&1; echo "goldens task4 rc=$?" | tee -a "$OUT/summary.txt"
timeout 90 ./build/carry/reference/task4_bf16_backward > "$OUT/task4_bf16_backward_reference.log" 2>&1
echo "task4_bf16_backward reference tests: exit $? — $(tail -n 2 "$OUT/task4_bf16_backward_reference.log" | head -n 1)" | tee -a "$OUT/summary.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
