#!/usr/bin/env bash
# call 8: the kept build (binaries from tools/gpu/pack_gpu.sh: the row terms paired at D = 128, paired_row_terms) —
# float64 checks at 16 ragged shapes, three rounds in turn against the build before (bwd_prev, carry/x.tar.xz) at the
# course shape and at S = 1,024 and 1,000 (the grader's timed causal shape), then Task 4's tests on the reference and
# the skeletons and 4d's calibration case (tools/gpu/gpu_session.sh).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
cp build/carry/reference/bench_task4_bf16_backward $E/bwd_kept
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64 --shape=8,24,1000,128 --shape=16,8,777,64 --shape=5,9,1024,64"
timeout -s KILL 90 $E/bwd_kept $R > "$OUT/logs/kept_ragged.log" 2>&1
echo "kept ragged rc=$? $(grep -c ' ok$' "$OUT/logs/kept_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/kept_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
S="4,16,4096,128 16,16,1024,128 16,16,1000,128"
for r in 1 2 3; do for sh in $S; do for b in prev kept; do
  timeout -s KILL 40 $E/bwd_$b --shape=$sh > "$OUT/logs/${b}_${sh//,/x}_r$r.log" 2>&1 || echo "$b $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done; done
for sh in $S; do t=${sh//,/x}
  mkdir -p /tmp/cmp_$t; for b in prev kept; do for r in 1 2 3; do cp "$OUT/logs/${b}_${t}_r$r.log" /tmp/cmp_$t/${b}_r$r.log; done; done
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$t prev kept | tee -a "$OUT/summary.txt"
done
ONLY_TASKS=4 SKIP_GRADE=1 SKIP_EXPLOITS=1 ONLY_CONTROLS="task4d_calibration_rung1" OUT=$OUT/checks \
  timeout 260 bash tools/gpu/gpu_session.sh 2>&1 | grep "^== " | tee -a "$OUT/summary.txt"
grep -h -iE "calibration|credit|band" $OUT/checks/controls.log 2>/dev/null | tail -6 | tee -a "$OUT/summary.txt"
(cd "$OUT" && tar -czf checks.tgz checks && rm -rf checks && tar czf logs.tgz logs && rm -rf logs)
