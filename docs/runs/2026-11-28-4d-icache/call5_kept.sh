#!/usr/bin/env bash
# call 5 (calls 3 and 4 stashed FA4's wheel halves in ~/fa4-stash): the kept build (binaries from tools/gpu/pack_gpu.sh:
# the persistent D = 64 path with 32-bit key-block numbers) — float64 checks at ragged shapes, three rounds in turn at
# 16·32·1024·64 against bwd_old (HEAD before the change, carry/x.tar.xz), 4d's tests on the reference, and issue 31's
# table with FA4 in the same call (tools/vs_torch/bf16_rounds.sh, two rounds).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl 2>&1 | tail -2
python3 -c "import importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'))" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
cp build/carry/reference/bench_task4_bf16_backward $E/bwd_kept
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64 --shape=8,24,1000,128 --shape=16,8,777,64 --shape=5,9,1024,64"
timeout -s KILL 90 $E/bwd_kept $R > "$OUT/logs/kept_ragged.log" 2>&1
echo "kept ragged rc=$? $(grep -c ' ok$' "$OUT/logs/kept_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/kept_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
for r in 1 2 3; do for b in old kept; do
  timeout -s KILL 40 $E/bwd_$b --shape=16,32,1024,64 > "$OUT/logs/${b}_r$r.log" 2>&1 || echo "$b r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" old kept | tee -a "$OUT/summary.txt"
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners
timeout 60 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/logs/goldens.log" 2>&1; echo "goldens task4 rc=$?" | tee -a "$OUT/summary.txt"
timeout 90 ./build/carry/reference/task4_bf16_backward > "$OUT/task4_bf16_backward_reference.log" 2>&1
echo "task4_bf16_backward reference tests: exit $? — $(tail -n 2 "$OUT/task4_bf16_backward_reference.log" | head -n 1)" | tee -a "$OUT/summary.txt"
ROUNDS=2 BIN=build/carry/reference OUT=$OUT timeout 380 bash tools/vs_torch/bf16_rounds.sh 2>&1 | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf rounds.tgz rounds && rm -rf rounds/r* && tar czf logs.tgz logs && rm -rf logs)
