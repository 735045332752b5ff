#!/usr/bin/env bash
# 4d with dQ added from the registers (red.global.add.v4.f32, the accumulator in the fragments' order): 4d's tests on the
# reference, ragged shapes through the benchmark's check, the benchmark beside torch's bf16 backwards in the same call
set -uo pipefail
OUT=${OUT:-build/o}; mkdir -p "$OUT/logs"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz && tar -C carry -xJf carry/t8.tar.xz
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/logs/gpu.txt"
T=carry/t8
timeout 150 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/logs/goldens.log" 2>&1; echo "goldens exit $?"
timeout 200 $T/task4_bf16_backward > "$OUT/logs/t4d_ref.log" 2>&1; echo "4d reference: exit $? $(tail -n 1 $OUT/logs/t4d_ref.log)"
grep -E "failed|error" "$OUT/logs/t4d_ref.log" | head -5
timeout 60 $T/bench_task4_bf16_backward --shape=2,2,1000,64 --shape=2,2,1000,128 --shape=3,2,129,64 --shape=1,1,1,128 --shape=2,3,4100,64 --shape=1,1,127,128 --shape=70,1000,2,64 > "$OUT/ragged.log" 2>&1; echo "ragged exit $? ok $(grep -c ' ok' $OUT/ragged.log) of $(grep -c 'B=' $OUT/ragged.log)"
grep "B=" "$OUT/ragged.log" | grep -v " ok" | head
timeout 120 $T/bench_task4_bf16_backward > "$OUT/bwd.log" 2>&1; echo "bench exit $?"
timeout 60 $T/bench_task4_bf16_backward --shape=2,6,4096,64 >> "$OUT/bwd.log" 2>&1
(cd tools/vs_torch && timeout 200 python3 sdpa_bf16_backward.py > "$OUT/torch_bwd.log" 2>&1); echo "torch exit $?"
grep -E "B=" "$OUT/bwd.log" | sed 's/  */ /g; s/(min [^)]*)//; s/= [0-9]*% of SGEMM//' | cut -c1-100
grep -E "B=|cuDNN|FA2" "$OUT/torch_bwd.log" | sed 's/  */ /g' | cut -c1-160 | head -40
tar -C "$OUT" -czf "$OUT/logs.tgz" logs; rm -rf "$OUT/logs"
