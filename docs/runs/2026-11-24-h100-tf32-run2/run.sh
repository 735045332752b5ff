#!/bin/bash
# The 3xTF32 rung of Task 4's ladder beside the FFMA reference and torch's fp32 SDPA backends, one device call:
# ragged checks, accuracy against float64, Bencher and stream timings (ladder_task4 --top), then torch
# (torch_course_shapes.py --stream --accuracy), then compute-sanitizer on the ragged checks.
cd "$(dirname "$0")"
set -o pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
date -u | tee -a "$OUT/gpu.txt"
./ladder_task4 --top 2>&1 | tee "$OUT/ladder_top.log"
echo "ladder rc=$?"
PYTHONUNBUFFERED=1 python3 torch_course_shapes.py --stream --accuracy 2>&1 | tee "$OUT/torch_stream.log"
echo "torch rc=$?"
timeout 90 compute-sanitizer --tool memcheck --print-limit 20 ./ladder_task4 --top --check > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -5 "$OUT/memcheck.log"
