#!/bin/bash
# Call 3: the decode's loads alone (decode_loads); strided pieces against the order of the items (DIAG_STRIDED 0–3),
# the ragged batch and B = 8, two rounds in turn, clean flush.
tar -C /tmp -xJf carry/d3.tar.xz
/tmp/d/decode_loads > $OUT/decode_loads.log 2>&1
for r in 1 2; do for st in 0 1 2 3; do for shape in 6 1; do
  echo "== round $r strided=$st shape=$shape" >> $OUT/rounds.log
  DIAG_NO_F32=1 DIAG_FLUSH=read DIAG_STRIDED=$st timeout 60 /tmp/d/bench5_diag --shape $shape 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/rounds.log
done; done; done
