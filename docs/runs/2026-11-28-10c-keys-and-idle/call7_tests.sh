#!/usr/bin/env bash
# call 7: the tests of Tasks 2, 4 (its four parts) and 5 on the reference and the skeletons (Tasks 2 and 5's peaky fresh
# draws now held to the tolerance × peak², commit 64377d2; Task 4's bf16 part with its new D = 64 long cases), Tasks 2
# and 5's GPU negative controls, and the exploit that computes timed calls in a lower precision.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
[ -d build/carry ] || { mkdir -p build && tar -C build -xJf carry/gpu.tar.xz; }
ONLY_TASKS="2 4 5" SKIP_GRADE=1 OUT=$OUT/checks timeout 560 bash tools/gpu/gpu_session.sh 2>&1 | grep "^== " | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf checks.tgz checks && rm -rf checks)
