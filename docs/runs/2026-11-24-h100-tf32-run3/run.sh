#!/bin/bash
# Confirmation at the small course shapes with the top rung's final tile choice: ladder_task4 --top --quick
# (ragged checks, accuracy, B=4 S=128 and S=4096), then torch at B=4 S=128 (--stream --accuracy --only-b4), twice
# each at S=128 for the run-to-run spread.
cd "$(dirname "$0")"
set -o pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
date -u | tee -a "$OUT/gpu.txt"
./ladder_task4 --top --quick 2>&1 | tee "$OUT/ladder_top_quick.log"
echo "ladder rc=$?"
PYTHONUNBUFFERED=1 python3 torch_course_shapes.py --stream --accuracy --only-b4 2>&1 | tee "$OUT/torch_stream_b4.log"
PYTHONUNBUFFERED=1 python3 torch_course_shapes.py --stream --only-b4 2>&1 | tee -a "$OUT/torch_stream_b4.log"
echo "torch rc=$?"
