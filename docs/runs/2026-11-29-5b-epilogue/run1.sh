#!/bin/bash
# Call 1: 5b's lean epilogue (the working tree: float4 combine, one thread's fence and count, the merge's parts and
# log-sum-exps loaded together) against the epilogue before it (bench5_orig: 4665d86's kernel), three rounds in turn at
# MQA, B = 1, the ragged batch, B = 8 and B = 64; bench5_trace (the lean epilogue with each block's globaltimer at its
# start, after its tiles, after its combine, at its end: trace.patch) at MQA, B = 1, B = 64 and the ragged batch; then
# the build from tools/gpu/pack_gpu.sh: Tasks 5, 6, 5b and 6b's tests, bench_task5_paged, paged_decode.py.
tar -C /tmp -xJf carry/ab1.tar.xz   # → /tmp/ab/bench5_orig, /tmp/ab/bench5_trace
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
NEW=build/carry/reference/bench_task5_paged
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 90 $3 --shape $2 2>&1 | grep -E "ms |trace" | grep -v "f32\|float32" | sed -E 's/\| host inside.*//' >> $OUT/ab.log; }
for r in 1 2 3; do for shape in 4 3 6 1 0; do run orig $shape /tmp/ab/bench5_orig; run new $shape $NEW; done; done
for shape in 4 3 0 6; do run trace $shape /tmp/ab/bench5_trace; done
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/paged_decode_torch.log $OUT/s/summary.txt $OUT/ 2>/dev/null
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
