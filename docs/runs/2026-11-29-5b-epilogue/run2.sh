#!/bin/bash
# Call 2: the lean epilogue's second form (v2, the working tree: the combine's and the merge's chunks without a branch
# between them, so that their loads go out together; 16 parts' loads at once where a thread merges one chunk) against
# the first (v1, call 1's "new"), three rounds in turn at MQA, B = 1, the ragged batch and B = 64; bench5_trace2
# (trace2.patch on v2: the blocks' globaltimer, and a one-thread kernel's stamp before and after the decode's launch)
# at MQA and B = 1 with the launch as kept, with 30 KB of parameters always (DIAG_PATH=big) and with the table uploaded
# once and then left on the device (DIAG_PATH=keep; timing only); then Tasks 5, 5b, 6 and 6b's tests with v2's runners.
tar -C /tmp -xJf carry/ab2.tar.xz   # → /tmp/ab/bench5_v1, bench5_v2, bench5_trace2, runner_task5, runner_task6 (v2)
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
cp /tmp/ab/runner_task5 /tmp/ab/runner_task6 build/carry/reference/
run() { echo "== $1 shape=$2 $4" >> $OUT/ab.log; env $4 timeout 90 $3 --shape $2 2>&1 | grep -E "ms |trace" | sed -E 's/\| host inside.*//' | awk '/trace/ || (/ ms / && n++ < 2)' >> $OUT/ab.log; }
for r in 1 2 3; do for shape in 4 3 6 0; do run v1 $shape /tmp/ab/bench5_v1; run v2 $shape /tmp/ab/bench5_v2; done; done
for shape in 4 3 0; do for path in kept big keep; do run trace2 $shape /tmp/ab/bench5_trace2 DIAG_PATH=$path; done; done
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
cp $OUT/s/summary.txt $OUT/ 2>/dev/null
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
