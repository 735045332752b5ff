#!/usr/bin/env bash
# 4b's entry point taking 10c causal from 4,096: 4b's and 4d's tests (4d's new forward+lse case at 4,100 causal D=64),
# the ladder's ragged check of 10c and the entry point, the benchmark's grid beside torch's in the same call
set -uo pipefail
OUT=${OUT:-build/o}; mkdir -p "$OUT/logs"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz && tar -C carry -xJf carry/t6.tar.xz
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/logs/gpu.txt"
t0=$(date +%s); note() { echo "== [$(( $(date +%s) - t0 ))s] $1" | tee -a "$OUT/summary.txt"; }
T=carry/t6
timeout 150 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/logs/goldens.log" 2>&1; note "goldens: exit $?"
timeout 150 $T/task4_bf16 > "$OUT/logs/t4b_ref.log" 2>&1; note "4b reference: exit $? $(tail -n 1 $OUT/logs/t4b_ref.log)"
timeout 200 $T/task4_bf16_backward > "$OUT/logs/t4d_ref.log" 2>&1; note "4d reference: exit $? $(tail -n 1 $OUT/logs/t4d_ref.log)"
grep -A3 "4100" "$OUT/logs/t4d_ref.log" | head -8
timeout 100 $T/skel/task4_bf16_backward > "$OUT/logs/t4d_skel.log" 2>&1; note "4d skeleton: exit $? passed $(grep -c '^\s*\[passed' $OUT/logs/t4d_skel.log) not-impl $(grep -c 'not implemented' $OUT/logs/t4d_skel.log)"
timeout 150 $T/check_ladder_task4_bf16 10c ref > "$OUT/logs/check_ladder.log" 2>&1; note "check_ladder 10c ref: exit $? $(tail -n 1 $OUT/logs/check_ladder.log)"
timeout 100 $T/bench_task4_bf16 --grid > "$OUT/fwd_grid.log" 2>&1; $T/bench_task4_bf16 --shape=2,6,4096,64 >> "$OUT/fwd_grid.log" 2>&1; note "bench_task4_bf16 --grid: exit $?"
(cd tools/vs_torch && timeout 200 python3 sdpa_bf16.py --grid > "$OUT/torch_fwd_grid.log" 2>&1); note "sdpa_bf16 --grid: exit $?"
grep -E "B=|flash_attention_forward_bf16 " "$OUT/fwd_grid.log" | sed 's/  */ /g' | cut -c1-90
grep -E "B=|cudnn" "$OUT/torch_fwd_grid.log" | head -40 | cut -c1-150
tar -C "$OUT" -czf "$OUT/logs.tgz" logs; rm -rf "$OUT/logs"
