#!/usr/bin/env bash
# call 7: call 6's benchmark rounds again (call 6 unpacked gpu.tar.xz where its bench was not found: they did not run). The kept build (persistent at D = 64 up to 1,024 rows), binaries from tools/gpu/pack_gpu.sh
# (PACK_CONTROLS="task4d_calibration_rung1" PACK_EXPLOITS=""), against the build before (bwd_base, carried in x.tar.xz):
# float64 checks at 16 ragged shapes, three rounds in turn at issue 31's six shapes, then Task 4's tests on the
# reference and the skeletons (gpu_session.sh).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz && tar -C build -xJf carry/gpu.tar.xz; E=/tmp/x
cp build/carry/reference/bench_task4_bf16_backward $E/bwd_kept
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64 --shape=8,24,1000,128 --shape=16,8,777,64 --shape=5,9,1024,64"
timeout -s KILL 90 $E/bwd_kept $R > "$OUT/logs/kept_ragged.log" 2>&1
echo "kept ragged rc=$? $(grep -c ' ok$' "$OUT/logs/kept_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/kept_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
for r in 1 2 3; do for b in base kept; do
  timeout -s KILL 60 $E/bwd_$b $S > "$OUT/logs/${b}_r$r.log" 2>&1 || echo "$b r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" base kept | tee -a "$OUT/summary.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
