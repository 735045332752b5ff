#!/usr/bin/env bash
# fetch_assets.sh — what Task 7 needs from PyPI, into .deps/ (git-ignored); does nothing when present.
#   .deps/gpt2.tiktoken  GPT-2's BPE ranks (base64 token, rank per line), the one file taken from the
#                        sdist of openai-whisper==20250625 (whisper itself is not installed); sha256 checked
#   .deps/py/            tiktoken (PyPI), the reference tokenizer the C++ one is checked against
#   .deps/cuda-tools/    cuobjdump and nvdisasm (PyPI, NVIDIA's wheels; the course repository only): make test reads the
#                        reference's machine code with them (tools/ci/check_sass.py); the toolkit here has nvcc, not these
# Called by tools/setup/install_deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEPS=.deps
PY=/usr/bin/python3
SHA=306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930
mkdir -p "$DEPS"
if ! echo "$SHA  $DEPS/gpt2.tiktoken" | sha256sum -c --status 2>/dev/null; then
  tmp=$(mktemp -d)
  $PY -m pip download -q --no-deps --no-binary=:all: -d "$tmp" openai-whisper==20250625
  tar -xzf "$tmp"/openai_whisper-20250625.tar.gz -C "$tmp" openai_whisper-20250625/whisper/assets/gpt2.tiktoken
  mv "$tmp"/openai_whisper-20250625/whisper/assets/gpt2.tiktoken "$DEPS/gpt2.tiktoken"
  rm -rf "$tmp"
  echo "$SHA  $DEPS/gpt2.tiktoken" | sha256sum -c --status || { echo "assets: gpt2.tiktoken has the wrong sha256" >&2; exit 1; }
  echo "assets: $DEPS/gpt2.tiktoken"
fi
if ! PYTHONPATH=$DEPS/py $PY -c "import tiktoken" 2>/dev/null; then
  $PY -m pip install -q --disable-pip-version-check --break-system-packages --target "$DEPS/py" tiktoken==0.14.0
  echo "assets: tiktoken in $DEPS/py"
fi
# (the course repository only: the student kit has no reference to check)
if ls task*/reference >/dev/null 2>&1 &&
   { [ ! -x "$DEPS/cuda-tools/nvidia/cu13/bin/cuobjdump" ] || [ ! -x "$DEPS/cuda-tools/nvidia/cu13/bin/nvdisasm" ]; }; then
  $PY -m pip install -q --disable-pip-version-check --break-system-packages --target "$DEPS/cuda-tools" \
    nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37
  echo "assets: cuobjdump and nvdisasm in $DEPS/cuda-tools"
fi
echo "assets: present"
