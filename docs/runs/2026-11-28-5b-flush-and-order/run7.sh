#!/bin/bash
# Call 7 (clean flush): where MQA's time goes beyond its loads. bench5_order (fa82d09), bench5_ne (no epilogue and no
# merge: each block returns after its tiles), bench5_ne_nc (no epilogue, no arithmetic: the loads, waits and barriers
# alone), noepi_nocomp_diag.patch; outputs wrong, timing only. MQA (its paged and contiguous rows print before the check
# throws only for the kept build) and B = 64, two rounds.
tar -C /tmp -xJf carry/d7.tar.xz
export DIAG_NO_F32=1 DIAG_FLUSH=read
run() { echo "== $1 shape=$2" >> $OUT/rounds.log; timeout 60 /tmp/d/$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/rounds.log; }
for r in 1 2; do for shape in 4 0 3; do for b in bench5_order bench5_ne bench5_ne_nc; do run $b $shape; done; done; done
