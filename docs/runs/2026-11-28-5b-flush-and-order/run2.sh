#!/bin/bash
# Call 2: strided pieces against contiguous ones, the ragged batch, three rounds in turn, both flushes; --layouts once each.
tar -C /tmp -xJf carry/d1.tar.xz
for r in 1 2 3; do for f in write read; do for st in 0 1; do
  echo "== round $r flush=$f strided=$st" >> $OUT/rounds.log
  DIAG_NO_F32=1 DIAG_FLUSH=$f DIAG_STRIDED=$st timeout 60 /tmp/d/bench5_diag --shape 6 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/rounds.log
done; done; done
for st in 0 1; do DIAG_FLUSH=read DIAG_STRIDED=$st timeout 100 /tmp/d/bench5_diag --layouts > $OUT/layouts_s$st.log 2>&1; done
