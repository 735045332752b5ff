#!/usr/bin/env bash
# call 5 (calls 3 and 4 stashed the two halves of the cu13 wheel, .whl/s1/big.aa and .whl/s2/big.ab, in ~/fa4-stash):
# FA4 from the carried wheels; issue 31's table (tools/vs_torch/bf16_rounds.sh, two rounds) on the kept build (O's rescale
# under the next Q·Kᵀ at D = 128), binaries from tools/gpu/pack_gpu.sh; the bf16 ladder's rungs 10, 10b, 10c and the entry
# point (the rescale moved in rung 10 too); then Task 4's tests on the reference and the skeletons.
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
timeout 120 build/carry/reference/ladder_task4_bf16 --only=10,ref > "$OUT/ladder10.log" 2>&1; echo "ladder rc=$?" | tee -a "$OUT/summary.txt"
grep -E "TFLOP|^B=" "$OUT/ladder10.log" | tail -60 > "$OUT/ladder10_short.txt"
ONLY_TASKS=4 SKIP_GRADE=1 SKIP_EXPLOITS=1 SKIP_CONTROLS=1 OUT=$OUT/checks \
  timeout 150 bash tools/gpu/gpu_session.sh 2>&1 | grep "^== " | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf checks.tgz checks && rm -rf checks)
