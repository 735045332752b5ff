#!/bin/bash
# Call 3: the kept build of the time (v3: tools/gpu/pack_gpu.sh on the working tree: v1's combine, v2's merge with its
# chunks' loads together) against v1 (call 1's "new") and v4 (v3 with the combine's threads a row each: pd_v4.patch),
# three rounds in turn at MQA, B = 1, the ragged batch and B = 64; then Tasks 5, 6, 5b and 6b's tests on the reference
# and the skeletons, bench_task5_paged and paged_decode.py on v3; then v4's runners and bridge: the reference's tests of
# Tasks 5, 5b, 6 and 6b, and paged_decode.py.
tar -C /tmp -xJf carry/ab3.tar.xz   # → /tmp/ab/bench5_v1, bench5_v4, runner_task5_v4, runner_task6_v4, libattnlab_v4.so
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
NEW=build/carry/reference/bench_task5_paged
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 90 $3 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do for shape in 4 3 6 0; do run v1 $shape /tmp/ab/bench5_v1; run v3 $shape $NEW; run v4 $shape /tmp/ab/bench5_v4; done; done
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/summary.txt $OUT/ 2>/dev/null
(cd $OUT/s && tar -xzf logs.tar.gz paged_decode_torch.log && cp paged_decode_torch.log $OUT/paged_decode_torch_v3.log)
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
cp /tmp/ab/runner_task5_v4 build/carry/reference/runner_task5 && cp /tmp/ab/runner_task6_v4 build/carry/reference/runner_task6
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners
for t in 5 5_paged 6 6_serve; do timeout 300 ./build/carry/reference/task$t > $OUT/v4_task${t}.log 2>&1; echo "v4 task$t reference tests: exit $? — $(tail -n 2 $OUT/v4_task${t}.log | head -n 1)" >> $OUT/v4_tests.txt; done
ATTNLAB_LIB=/tmp/ab/libattnlab_v4.so timeout 300 python3 tools/vs_torch/paged_decode.py > $OUT/paged_decode_torch_v4.log 2>&1
(cd $OUT && tar -cJf v4_logs.tar.xz v4_task*.log && rm v4_task*.log)
