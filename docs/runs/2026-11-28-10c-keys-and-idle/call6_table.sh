#!/usr/bin/env bash
# call 6 (calls 4 and 5 stashed the two halves of FA4's cu13 wheel, .whl/s1/big.aa and .whl/s2/big.ab, in ~/fa4-stash):
# FA4 from the carried wheels; issue 31's table (tools/vs_torch/bf16_rounds.sh, two rounds) on the kept build (rung 10c's
# idle consumers skip their work; the entry point's new rule), binaries from tools/gpu/pack_gpu.sh; the entry point
# against rungs 10b and 10c at the D = 64 shapes of the table.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl 2>&1 | tail -2
python3 -c "import importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'))" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
ROUNDS=2 BIN=build/carry/reference OUT=$OUT timeout 360 bash tools/vs_torch/bf16_rounds.sh 2>&1 | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf rounds.tgz rounds && rm -rf rounds/r*)
timeout 100 build/carry/reference/ladder_task4_bf16 --only=10b,10c,ref --shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 > "$OUT/ladder_d64.log" 2>&1
echo "ladder rc=$?" | tee -a "$OUT/summary.txt"
