#!/bin/bash
# Call 8 (clean flush): the epilogue. bench5_order (fa82d09); bench5_epi2 (epi_float2_diag.patch: the warps' results
# stored as float2 into rows of D + 8 floats, no bank conflicts); bench5_nomerge (nomerge_diag.patch: split pieces write
# their parts and exit, nobody merges; outputs wrong where split, timing only). Two rounds at MQA, B = 1, B = 64 and the
# ragged batch.
tar -C /tmp -xJf carry/d8.tar.xz
export DIAG_NO_F32=1 DIAG_FLUSH=read
run() { echo "== $1 shape=$2" >> $OUT/rounds.log; timeout 60 /tmp/d/$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/rounds.log; }
for r in 1 2; do for shape in 4 3 0 6; do for b in bench5_order bench5_epi2 bench5_nomerge; do run $b $shape; done; done; done
