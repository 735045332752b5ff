#!/usr/bin/env bash
# the ragged batch's two speeds: contiguous first in its process, pages of 64 twice, B = 64, ragged again (ORDER_DIAG), three processes
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar -C /tmp -xJf carry/s7.tar.xz
for r in 1 2 3; do
  ORDER_DIAG=1 timeout 80 /tmp/v7/order > "$OUT/order_$r.log" 2>&1; echo "process $r rc=$?"
  grep -E "^B=" "$OUT/order_$r.log" | sed 's/  */ /g' | cut -c1-150
done
