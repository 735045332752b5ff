#!/usr/bin/env bash
# call 3: FA4 into site-packages; bf16_rounds (3 rounds), every side GPU time only (the C++ benches' new timing)
set -uo pipefail
OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
cp carry/fa4/part.02 $HOME/fa4-stash/
site=$(python3 -c "import site; print(site.getsitepackages()[0])")
cat $HOME/fa4-stash/part.00 $HOME/fa4-stash/part.01 $HOME/fa4-stash/part.02 | xz -d | tar -x -C "$site"; echo "fa4 extracted: $?" | tee -a "$OUT/summary.txt"
python3 -c "import importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'))" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
mkdir -p carry/n4 && tar -C carry/n4 -xJf carry/n4.tar.xz
ROUNDS=3 BIN=carry/n4 bash tools/vs_torch/bf16_rounds.sh 2>&1 | tee -a "$OUT/summary.txt"
cd "$OUT" && tar -czf rounds.tgz rounds && rm -rf rounds/r*
