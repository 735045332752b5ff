#!/usr/bin/env bash
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/tl
tar -C /tmp -xJf carry/s6.tar.xz
for v in newtl oldtl; do for sh in 6 3 4 0; do
  TL_CALL=5 timeout 60 /tmp/v6/$v --shape $sh > "/tmp/tl/tl_${v}_$sh.txt" 2>&1; echo "$v $sh rc=$? $(grep -c '^TL ' /tmp/tl/tl_${v}_$sh.txt) $(grep -E '^B=' /tmp/tl/tl_${v}_$sh.txt | head -1 | cut -c40-90)"
done; done
# ragged, later in the process: after shape 0 (the full benchmark's order shows the second speed)
TL_CALL=5 ATTNLAB_WAVES=1 timeout 60 /tmp/v6/newtl --layouts > /tmp/tl/layouts_new.txt 2>&1; echo "layouts rc=$?"
tar -C /tmp -cJf "$OUT/tl.tar.xz" tl
