#!/bin/bash
# Call 6 (clean flush): the query rows loaded after the first tiles' loads (bench5_qafter, q_after.patch on fa82d09)
# against the order build (bench5_order, fa82d09), three rounds in turn at MQA, the ragged batch, B = 64 and B = 1; the
# same kernel with its arithmetic compiled out (bench5_nocomp, nocomp_diag.patch; outputs wrong, timing only) at MQA
# and B = 64.
tar -C /tmp -xJf carry/d6.tar.xz
export DIAG_NO_F32=1 DIAG_FLUSH=read
run() { echo "== $1 shape=$2" >> $OUT/rounds.log; timeout 60 /tmp/d/$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/rounds.log; }
for r in 1 2 3; do for shape in 4 6 0 3; do for b in bench5_order bench5_qafter; do run $b $shape; done; done; done
for shape in 4 0; do run bench5_nocomp $shape; done
