#!/bin/bash
# Call 4: the fixed build (tools/gpu/pack_gpu.sh at dba2fb1, a clean tree, with 5b's three negative controls and three
# GPU exploits), its 5b test program, skeleton's and grader from 27c3118 (the new long D = 64 case) laid over it (c4).
# First the new test program with e1bfb74's runner (the decode before the fix: old/), then gpu_session.sh paged on
# Tasks 5 and 6 (tests, bench_task5_paged, paged_decode.py), then 5b's controls, while the call's time lasts.
start=$SECONDS
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz && tar -C /tmp -xJf carry/c4.tar.xz
cp /tmp/c4/reference/* build/carry/reference/ && cp /tmp/c4/skeleton/* build/carry/skeleton/
mkdir -p /tmp/held && mv carry/gpu.tar.xz /tmp/held/  # gpu_session.sh would unpack it again over the new programs
[ -x /usr/bin/bwrap ] || install -m 755 build/carry/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners
python3 tools/goldens/make_goldens.py --only task5 > $OUT/goldens.log 2>&1
ATTNLAB_GOLDENS=$PWD/goldens timeout 120 /tmp/c4/old/task5_paged > $OUT/t5b_old_runner.log 2>&1; echo "exit $?" >> $OUT/t5b_old_runner.log
echo "old runner done at $((SECONDS - start)) s" > $OUT/progress.log
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/summary.txt $OUT/s/gpu.txt $OUT/s/task5_paged_*.log $OUT/ 2>/dev/null
(cd $OUT/s && tar -xzf logs.tar.gz ./paged_decode_torch.log 2>/dev/null; cp paged_decode_torch.log $OUT/ 2>/dev/null)
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
echo "session done at $((SECONDS - start)) s" >> $OUT/progress.log
mkdir -p build/controls && cp -r build/carry/controls/* build/controls/
export ATTNLAB_GOLDENS=$PWD/goldens
timeout $((560 - (SECONDS - start))) python3 tools/controls/check_controls.py --prebuilt --grader-timeout 400 \
  --only task5b_logical_page --only task5b_reads_past_length --only task5b_kv_head_h > $OUT/controls.log 2>&1
echo "controls exit $? at $((SECONDS - start)) s" >> $OUT/progress.log
