#!/usr/bin/env bash
# the review's build: 4d and 4b benches --quick (float64 / fp32 checks after the epilogue refactor), 4d ragged shapes,
# then three GPU exploits (a constructor's device memory, a thread between calls, bf16 timed calls paced)
set -uo pipefail
export OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT" build
tar -C build -xJf carry/gpu.tar.xz
B=build/carry/reference
timeout 60 $B/bench_task4_bf16_backward --shape=1,1,1,128 --shape=2,3,129,128 --shape=2,2,1000,64 --shape=1,2,4100,128 --shape=16,16,1024,128 > "$OUT/bwd_check.log" 2>&1; echo "bwd checks rc=$?" | tee -a "$OUT/fin.txt"
grep -E "B=" "$OUT/bwd_check.log" | sed 's/  */ /g' | cut -c1-140 | tee -a "$OUT/fin.txt"
timeout 90 $B/bench_task4_bf16 --quick > "$OUT/fwd_quick.log" 2>&1; echo "fwd quick rc=$?" | tee -a "$OUT/fin.txt"
grep -ciE "mismatch|fail" "$OUT/fwd_quick.log" | sed 's/^/fwd mismatch lines: /' | tee -a "$OUT/fin.txt"
ONLY_TASKS=4 SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 timeout 420 bash tools/gpu/gpu_session.sh > "$OUT/session.log" 2>&1; echo "session rc=$?" | tee -a "$OUT/fin.txt"
