#!/bin/bash
# Call 3: the kept build (tools/gpu/pack_gpu.sh at dc5aa2f, a clean tree, with 5b's three negative controls): Tasks 5,
# 6, 5b and 6b's tests on the reference and the skeletons, bench_task5_paged and paged_decode.py (gpu_session.sh
# paged), then 5b's three controls graded (as gpu_session.sh grades them), while the call's time lasts.
start=$SECONDS
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/summary.txt $OUT/s/gpu.txt $OUT/ 2>/dev/null
(cd $OUT/s && tar -xzf logs.tar.gz ./paged_decode_torch.log 2>/dev/null; cp paged_decode_torch.log $OUT/ 2>/dev/null)
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
echo "session done at $((SECONDS - start)) s" > $OUT/controls.log
mkdir -p build/controls && cp -r build/carry/controls/* build/controls/
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners
timeout $((345 - (SECONDS - start))) python3 tools/controls/check_controls.py --prebuilt --grader-timeout 400 \
  --only task5b_logical_page --only task5b_reads_past_length --only task5b_kv_head_h >> $OUT/controls.log 2>&1
echo "exit $? at $((SECONDS - start)) s" >> $OUT/controls.log
