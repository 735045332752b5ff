#!/bin/bash
# Call 1: the cluster combine (the working tree, packed by tools/gpu/pack_gpu.sh) against the build before it
# (bench_kept: 653faf4's bench_task5_paged), three rounds in turn at MQA, B = 8, B = 1, the ragged batch and B = 64;
# then Tasks 5, 6, 5b and 6b's tests on the reference and the skeletons, bench_task5_paged and paged_decode.py.
tar -C /tmp -xJf carry/ab.tar.xz   # → /tmp/ab/bench_kept; task5_paged_ref, task5_paged_skel: the tests with the two uniform-batch cases
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
cp /tmp/ab/task5_paged_ref build/carry/reference/task5_paged && cp /tmp/ab/task5_paged_skel build/carry/skeleton/task5_paged
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 90 $3 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do for shape in 4 1 3 6 0; do run kept $shape /tmp/ab/bench_kept; run cluster $shape build/carry/reference/bench_task5_paged; done; done
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/summary.txt $OUT/ 2>/dev/null
(cd $OUT/s && tar -xzf logs.tar.gz paged_decode_torch.log && cp paged_decode_torch.log $OUT/)
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
