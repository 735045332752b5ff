#!/bin/bash
# Call 9 (clean flush). First, where MQA's epilogue spends its time, all with the arithmetic compiled out
# (epilogue_parts_diag.patch on fa82d09; outputs wrong, timing only): bench5_ne_nc (no epilogue), bench5_E2 (the
# warps' results stored and the barrier after, then return), bench5_E1 (the combine, no global stores, no merge);
# bench5_order beside them; two rounds at MQA and B = 1. Then the kept build (tools/gpu/pack_gpu.sh at 4c10021: the
# float2 epilogue): Tasks 5, 6, 5b and 6b's tests, bench_task5_paged, paged_decode.py.
tar -C /tmp -xJf carry/d9.tar.xz
run() { echo "== $1 shape=$2" >> $OUT/epilogue.log; DIAG_NO_F32=1 DIAG_FLUSH=read timeout 60 /tmp/d/$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' >> $OUT/epilogue.log; }
for r in 1 2; do for shape in 4 3; do for b in bench5_order bench5_ne_nc bench5_E2 bench5_E1; do run $b $shape; done; done; done
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/paged_decode_torch.log $OUT/ 2>/dev/null
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
