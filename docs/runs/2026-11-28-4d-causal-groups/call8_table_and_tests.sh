#!/usr/bin/env bash
# call 8 (calls 6 and 7 stashed the two halves of the cu13 wheel, .whl/s1/big.aa and .whl/s2/big.ab, in ~/fa4-stash):
# FA4 from the carried wheels, issue 31's table (tools/vs_torch/bf16_rounds.sh, two rounds) on d805ecf's binaries, then
# Task 4's tests and 4d's two GPU controls
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl 2>&1 | tail -2
python3 -c "import importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'))" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
ROUNDS=2 BIN=build/carry/reference OUT=$OUT timeout 330 bash tools/vs_torch/bf16_rounds.sh 2>&1 | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf rounds.tgz rounds && rm -rf rounds/r*)
ONLY_TASKS=4 SKIP_GRADE=1 SKIP_EXPLOITS=1 ONLY_CONTROLS="task4d_calibration_rung1 task4d_no_causal_mask" OUT=$OUT/checks \
  timeout 200 bash tools/gpu/gpu_session.sh 2>&1 | grep "^== " | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf checks.tgz checks && rm -rf checks)
