#!/usr/bin/env bash
# 4d's two controls whose patches changed (no_causal_mask, dq_race), then 4d's two GPU exploits
set -uo pipefail
OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT/logs"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners PYTHONUNBUFFERED=1
[ -x /usr/bin/bwrap ] || install -m 755 build/carry/bwrap /usr/bin/bwrap
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/logs/gpu.txt"
t0=$(date +%s); note() { echo "== [$(( $(date +%s) - t0 ))s] $1" | tee -a "$OUT/summary.txt"; }
timeout 150 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/logs/goldens.log" 2>&1; note "goldens: exit $?"
mkdir -p build/controls && cp -r build/carry/controls/* build/controls/
timeout 380 python3 tools/controls/check_controls.py --prebuilt --grader-timeout 200 --repeat 1 --only task4d_calibration_rung1 --only task4d_no_causal_mask --only task4d_dq_race > "$OUT/logs/controls.log" 2>&1; note "controls: exit $?"
grep -E "^\s*\[|controls:" "$OUT/logs/controls.log" | cut -c1-300
for e in task4d_six_bits_when_timed; do
  left=$(( 580 - ($(date +%s) - t0) )); [ $left -lt 130 ] && { note "$e: not run (time)"; continue; }
  timeout $((left - 10)) python3 tools/controls/check_exploits.py --prebuilt --only $e > "$OUT/logs/exploit_$e.log" 2>&1
  note "$e: exit $? $(grep -E '\[(held|BROKEN|skip)\]' $OUT/logs/exploit_$e.log | cut -c1-220)"
done
tar -C "$OUT" -czf "$OUT/logs.tgz" logs; rm -rf "$OUT/logs"
