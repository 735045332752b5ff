#!/bin/bash
# Call 3 (call 2's binaries: tools/gpu/pack_gpu.sh at bede7fb): the reference's times of parts 5b and 6b for the kit's
# estimates, now with gpu_session.sh's environment (the null runners from the carried binaries; call 2 ran without it
# and every shape came back untimed, 0.0 ms, which reference_times.py then wrote in: it now refuses such a shape);
# then the three GPU exploits call 2's limit cut off. Its first run (call3a/) did not install the runners' sandbox
# (bwrap) as gpu_session.sh does: every runner exited with 127 and nothing was timed or graded; the second (call3b/) did.
tar -C /tmp -xJf carry/ab.tar.xz
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
[ -x /usr/bin/bwrap ] || install -m 755 build/carry/bwrap /usr/bin/bwrap  # the runners' sandbox (gpu_session.sh does the same)
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners PYTHONUNBUFFERED=1
for t in 5 6; do python3 tools/goldens/make_goldens.py --only task$t >> $OUT/goldens.log 2>&1; echo "goldens task$t: exit $?" >> $OUT/steps.log; done
cp grader/reference_times.json $OUT/reference_times.json
for part in 5b 6b; do
  timeout 200 python3 tools/gpu/reference_times.py --grader build/carry/reference/grader --bin-dir build/carry/reference \
    --file $OUT/reference_times.json --part $part > $OUT/reference_times_$part.log 2>&1; echo "reftimes $part: exit $?" >> $OUT/steps.log
done
timeout 330 python3 tools/controls/check_exploits.py --prebuilt --only task5b_half_keys_when_timed --only task5_bf16_cache_when_timed \
  --only task6b_half_heads_when_timed > $OUT/exploits.log 2>&1; echo "exploits: exit $?" >> $OUT/steps.log
