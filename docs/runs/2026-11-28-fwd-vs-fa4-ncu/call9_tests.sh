#!/usr/bin/env bash
# call 9: Task 4's four parts' tests on the reference and the skeletons, 4b's control task4_bf16_no_rescale, the exploit
# task4_bf16_when_timed, on the same binaries as call 8.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -d build/carry ] || { mkdir -p build && tar -C build -xJf carry/gpu.tar.xz; }
ONLY_TASKS=4 SKIP_GRADE=1 OUT=$OUT/checks timeout 560 bash tools/gpu/gpu_session.sh 2>&1 | grep "^== " | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf checks.tgz checks && rm -rf checks)
