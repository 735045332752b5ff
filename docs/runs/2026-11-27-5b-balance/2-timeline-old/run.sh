#!/usr/bin/env bash
# 5b timeline: each block's start and end (%globaltimer) and SM, one call of the ragged batch and of B = 64, old plan and stretches
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar -C /tmp -xJf carry/s6.tar.xz
for v in oldtl newtl; do for sh in 6 0 3 4; do
  TL_CALL=5 timeout 60 /tmp/v6/$v --shape $sh > "$OUT/tl_${v}_$sh.txt" 2>&1; echo "$v $sh rc=$? $(grep -c '^TL ' $OUT/tl_${v}_$sh.txt) $(grep -E '^B=' $OUT/tl_${v}_$sh.txt | head -1 | cut -c1-90)"
done; done
