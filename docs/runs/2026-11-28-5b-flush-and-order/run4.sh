#!/bin/bash
# Call 4 (clean flush throughout): the kept order (bench5_order) against the old (bench5_diag, DIAG_STRIDED=0) and a merge
# with 16 parts' loads in flight (bench5_merge16), three rounds in turn at B = 1 and the ragged batch, one at B = 8 and
# MQA; then MQA without its P·V, its Q·Kᵀ or both mma (bench5_skip, DIAG_SKIP=1, 2, 3; outputs wrong, timing only).
tar -C /tmp -xJf carry/d4.tar.xz
export DIAG_NO_F32=1 DIAG_FLUSH=read
run() { echo "== $1 shape=$2" >> $OUT/rounds.log; timeout 60 /tmp/d/$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/rounds.log; }
for r in 1 2 3; do for shape in 3 6; do for b in bench5_diag bench5_order bench5_merge16; do run $b $shape; done; done; done
for shape in 1 4; do for b in bench5_diag bench5_order bench5_merge16; do run $b $shape; done; done
for k in 0 1 2 3; do echo "== skip=$k" >> $OUT/skip.log; DIAG_SKIP=$k timeout 60 /tmp/d/bench5_skip --shape 4 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/skip.log; done
