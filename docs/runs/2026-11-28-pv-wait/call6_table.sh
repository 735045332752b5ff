#!/usr/bin/env bash
# call 6 (calls 4 and 5 stashed FA4's wheel halves in ~/fa4-stash): the kept build (binaries from tools/gpu/pack_gpu.sh,
# the ladder's check beside them): the bf16 ladder's ragged checks of rungs 9, 10, 10b, 10c and the entry point; issue
# 31's table with FA4 in the same call (tools/vs_torch/bf16_rounds.sh, two rounds).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl 2>&1 | tail -2
python3 -c "import importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'))" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz
timeout 150 /tmp/x/check_ladder 9 10 10b 10c ref > "$OUT/check_ladder.log" 2>&1; echo "check_ladder rc=$?" | tee -a "$OUT/summary.txt"
tail -1 "$OUT/check_ladder.log" | tee -a "$OUT/summary.txt"
ROUNDS=2 BIN=build/carry/reference OUT=$OUT timeout 380 bash tools/vs_torch/bf16_rounds.sh 2>&1 | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf rounds.tgz rounds && rm -rf rounds/r*)
