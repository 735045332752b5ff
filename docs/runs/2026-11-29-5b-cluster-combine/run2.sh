#!/bin/bash
# Call 2 (binaries from tools/gpu/pack_gpu.sh at bede7fb with PACK_CONTROLS="task5b_kv_head_h" (unused here) and the six GPU exploits below):
# cluster_occupancy (how many of the decode's blocks run at once as clusters of 1, 2, 4, 8); the reference's times of
# parts 5b and 6b for the kit's estimates (tools/gpu/reference_times.py --part, into a copy of grader/reference_times.json);
# then six GPU exploits on this build (SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 gpu_session.sh: every exploit carried).
tar -C /tmp -xJf carry/ab.tar.xz   # → /tmp/ab/cluster_occupancy
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
export ATTNLAB_GOLDENS=$PWD/goldens
for t in 4 5 6; do python3 tools/goldens/make_goldens.py --only task$t >> $OUT/goldens.log 2>&1; echo "goldens task$t: exit $?" >> $OUT/steps.txt; done
/tmp/ab/cluster_occupancy > $OUT/cluster_occupancy.log 2>&1
cp grader/reference_times.json $OUT/reference_times.json
for part in 5b 6b; do
  timeout 200 python3 tools/gpu/reference_times.py --grader build/carry/reference/grader --bin-dir build/carry/reference \
    --file $OUT/reference_times.json --part $part > $OUT/reference_times_$part.log 2>&1; echo "reftimes $part: exit $?" >> $OUT/steps.txt
done
ONLY_TASKS="4 5 6" SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_GOLDENS=1 OUT=$OUT/s timeout 420 bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
cp $OUT/s/summary.txt $OUT/ 2>/dev/null; cp $OUT/s/exploits.log $OUT/ 2>/dev/null
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
