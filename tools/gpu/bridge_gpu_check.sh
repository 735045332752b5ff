#!/usr/bin/env bash
# bridge_gpu_check.sh — the Python bridge's checks on a GPU machine, in one command, from a library
# built elsewhere. Run from the repository root; logs go to $OUT (default build/bridge-gpu-out).
#
#   here:   make python IMPL=reference                       # → build/reference/python/libattnlab.so
#           /usr/bin/python3 tools/goldens/train_model.py --write-tokens build/kjv-tokens.pt   # only for `train`
#   carry:  build/  (the library; build/kjv-tokens.pt for `train`; models/kjv-gpt2 too, if you have it, for the HF check)
#   there:  [RESULTS=path/to/Results.md] bash tools/gpu/bridge_gpu_check.sh     # ≈ 4 minutes
#           [MINUTES=5] bash tools/gpu/bridge_gpu_check.sh train                # `make model` on the GPU, ≈ 6 minutes
#
# The backward (Task 4c) and training on it, in one call of under 10 minutes:
#   here:   bash tools/gpu/bridge_gpu_check.sh pack-backward      # make python IMPL=reference, the tokens → carry/bwd-python/
#   there:  bash tools/gpu/bridge_gpu_check.sh backward           # carry: carry/bwd-python; ≈ 8 minutes
#           python/tests/test_bridge_gpu.py (with the gradient checks), then make train-attnlab's run
#           (tools/vs_torch/train_attnlab.py, STEPS steps (default 1500), at most MAX_MINUTES=1.6 a run) into $OUT: the log, the
#           JSON of the curves, the picture where matplotlib is (else: tools/vs_torch/train_attnlab.py --plot JSON here).
#           PRECISION=bf16: the bf16 training (4d, --precision bf16; 600 steps by default).
#
# Checks: python/tests/test_bridge_gpu.py (attention incl. causal, Sq ≠ Sk, S = 1/127/129, D = 32…128;
# decode; softmax; gemm; the torch operator under torch.compile; a side stream) against float64 torch;
# tools/vs_torch/torch_speedups.py (into a copy of $RESULTS in $OUT, else $OUT/torch_speedups.md); tools/vs_torch/hf_attnlab.py
# (GPT-2, a GQA Llama, the default model if carried: attnlab's greedy tokens = eager's, tokens/s);
# tools/vs_torch/bridge_overhead.py (the bridge's host time per call beside SDPA's; GPT-2's tokens/s at batch 1).
# `train`: tools/goldens/train_model.py on the GPU from the carried tokens → models/kjv-gpt2-gpu (too large to come
# back: its greedy text is in the log), then hf_attnlab.py on it.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/bridge-gpu-out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export ATTNLAB_IMPL=${ATTNLAB_IMPL:-reference} PYTHONUNBUFFERED=1
summary=()
note() { summary+=("$1"); echo "== $1"; }
finish() { printf '%s\n' "${summary[@]}" > "$OUT/summary.txt"; }
trap finish EXIT

if [ "${1:-}" = pack-backward ]; then  # here: what `backward` needs there (≈ 10 MB)
  CARRY=${CARRY:-carry/bwd-python}
  make --no-print-directory -j2 python IMPL=reference >/dev/null || { echo "pack-backward: make python IMPL=reference failed"; exit 1; }
  [ -f build/kjv-tokens.pt ] || PYTHONPATH=.deps/py /usr/bin/python3 tools/goldens/train_model.py --write-tokens build/kjv-tokens.pt || exit 1
  mkdir -p "$CARRY" && strip -o "$CARRY/libattnlab.so" build/reference/python/libattnlab.so && cp build/kjv-tokens.pt "$CARRY/"
  ls -la "$CARRY"; echo "pack-backward: run 'bash tools/gpu/bridge_gpu_check.sh backward' with carry [\"$CARRY\"]"
  exit 0
fi
if [ "${1:-}" = backward ]; then  # there: the library and the tokens from pack-backward
  CARRY=${CARRY:-carry/bwd-python}
  export ATTNLAB_LIB=${ATTNLAB_LIB:-$CARRY/libattnlab.so}
fi

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
note "gpu: $(tail -n 1 "$OUT/gpu.txt"); $($PY -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])' 2>&1)"
[ -f "build/$ATTNLAB_IMPL/python/libattnlab.so" ] || [ -n "${ATTNLAB_LIB:-}" ] \
  || { note "no build/$ATTNLAB_IMPL/python/libattnlab.so: build it with make python IMPL=$ATTNLAB_IMPL and carry build/"; exit 1; }

if [ "${1:-}" = train ]; then
  [ -f build/kjv-tokens.pt ] || { note "no build/kjv-tokens.pt: make it with tools/goldens/train_model.py --write-tokens and carry build/"; exit 1; }
  timeout 900 $PY tools/goldens/train_model.py --out models/kjv-gpt2-gpu --tokens build/kjv-tokens.pt --minutes "${MINUTES:-5}" \
    > "$OUT/train.log" 2>&1
  note "train_model (GPU): exit $? — $(grep -m1 'on the CUDA' "$OUT/train.log" | cut -c1-160)"
  note "$(grep 'stopped after\|keeping step' "$OUT/train.log" | tr '\n' ' ')"
  note "$(grep 'greedy' "$OUT/train.log" | tr '\n' ' ')"
  timeout 300 $PY tools/vs_torch/hf_attnlab.py --model models/kjv-gpt2-gpu > "$OUT/hf_trained.log" 2>&1
  note "hf_attnlab on the trained model: exit $? — $(tail -n 1 "$OUT/hf_trained.log")"
  exit 0
fi

# backward: the tests get 220 s and the training 330 s (3 runs of at most MAX_MINUTES), within a 600 s call
timeout "$([ "${1:-}" = backward ] && echo 220 || echo 240)" $PY python/tests/test_bridge_gpu.py -v > "$OUT/bridge_tests.log" 2>&1
note "bridge on the GPU (python/tests/test_bridge_gpu.py): exit $? — $(grep -E '^(OK|FAILED)' "$OUT/bridge_tests.log" | tail -n 1)"

if [ "${1:-}" = backward ]; then
  while read -r line; do note "$line"; done < <(grep '^gradients:\|^bf16:' "$OUT/bridge_tests.log")
  timeout 330 $PY tools/vs_torch/train_attnlab.py --tokens "$CARRY/kjv-tokens.pt" --out "$OUT" --precision "${PRECISION:-float32}" \
    ${STEPS:+--steps "$STEPS"} --max-minutes "${MAX_MINUTES:-1.6}" > "$OUT/train_attnlab.log" 2>&1
  note "train_attnlab (make train-attnlab's run): exit $?"
  while read -r line; do note "$line"; done < <(grep 'steps in\|stopped at\|loss:\|AGREE\|DIFFER\|tokens/s:\|matplotlib\|Error\|skipped' "$OUT/train_attnlab.log")
  exit 0
fi

if [ -n "${RESULTS:-}" ] && [ -f "$RESULTS" ]; then
  cp "$RESULTS" "$OUT/Results.md"
  speed_args=(--results "$OUT/Results.md")
else
  speed_args=(--results /nonexistent --markdown "$OUT/torch_speedups.md")
fi
timeout 360 $PY tools/vs_torch/torch_speedups.py "${speed_args[@]}" > "$OUT/torch_speedups.log" 2>&1
note "torch_speedups: exit $? — $(tail -n 1 "$OUT/torch_speedups.log")"

timeout 300 $PY tools/vs_torch/hf_attnlab.py > "$OUT/hf_attnlab.log" 2>&1
note "hf_attnlab: exit $? — $(tail -n 1 "$OUT/hf_attnlab.log")"

timeout 300 $PY tools/vs_torch/bridge_overhead.py > "$OUT/bridge_overhead.log" 2>&1
note "bridge_overhead: exit $? — $(grep -c 'µs' "$OUT/bridge_overhead.log") per-call figures, $(grep -c 'tokens/s' "$OUT/bridge_overhead.log") tokens/s rows"
