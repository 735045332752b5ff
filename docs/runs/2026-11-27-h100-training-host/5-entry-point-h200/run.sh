#!/usr/bin/env bash
# H200: 10b against 10c at D = 64 (the entry point's new causal threshold), then 4b's and 4d's tests on this build
set -uo pipefail
OUT=${OUT:-build/o}; mkdir -p "$OUT/logs"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz && tar -C carry -xJf carry/t6.tar.xz
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/logs/gpu.txt"
S=""
for s in 2,6,4096,64 1,32,4096,64 4,16,4096,64 4,32,4096,64 8,32,4096,64 4,32,2048,64 2,32,8192,64 1,32,16384,64; do S="$S --shape=$s"; done
for pass in 1 2; do timeout 200 carry/lad/ladder_task4_bf16 --only=10b,10c $S > $OUT/ladder_pass$pass.log 2>&1; echo "ladder pass $pass exit $?"; done
T=carry/t6
timeout 150 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/logs/goldens.log" 2>&1; echo "goldens exit $?"
timeout 150 $T/task4_bf16 > "$OUT/logs/t4b_ref.log" 2>&1; echo "4b reference: exit $? $(tail -n 1 $OUT/logs/t4b_ref.log)"
timeout 200 $T/task4_bf16_backward > "$OUT/logs/t4d_ref.log" 2>&1; echo "4d reference: exit $? $(tail -n 1 $OUT/logs/t4d_ref.log)"
timeout 150 $T/check_ladder_task4_bf16 10c ref > "$OUT/logs/check_ladder.log" 2>&1; echo "check_ladder 10c ref: exit $? $(tail -n 1 $OUT/logs/check_ladder.log)"
for f in $OUT/ladder_pass1.log $OUT/ladder_pass2.log; do python3 - $f <<'PY'
import re,sys
s=None;b=None
for line in open(sys.argv[1]):
    if line.startswith("B="): s=" ".join(line.split()[:5]).replace("(tolerance","n")
    m=re.search(r"([\d.]+) TFLOP/s",line)
    if line.startswith("  10b") and m: b=float(m.group(1))
    if line.startswith("  10c") and m: c=float(m.group(1)); print(f"{s:32s} 10b {b:6.1f} 10c {c:6.1f} {c/b:.3f}")
PY
done
tar -C "$OUT" -czf "$OUT/logs.tgz" logs; rm -rf "$OUT/logs"
