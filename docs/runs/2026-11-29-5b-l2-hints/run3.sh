#!/bin/bash
# Call 3: the two ways to keep MQA's loads unmarked, built from the working tree: h3f (evict_first on every K and V
# load, as call 1's h3) and h6f (evict_first where a group has one row block, plain cp.async elsewhere: a uniform
# branch a load); each one's 5b tests (its runner_task5 beside the kit's test program), then bench_h0 (no hint),
# h3f and h6f in turn at MQA, B = 1, the ragged batch, B = 64 and B = 8, while the call's time lasts.
start=$SECONDS
tar -C /tmp -xJf carry/c3.tar.xz   # → /tmp/c3/bench_h0, /tmp/c3/h3f/{bench_task5_paged,t/}, /tmp/c3/h6f/…
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
[ -x /usr/bin/bwrap ] || install -m 755 /tmp/c3/bwrap /usr/bin/bwrap  # the runners' sandbox
export ATTNLAB_NULL_RUNNER_DIR=/tmp/c3/null
python3 tools/goldens/make_goldens.py --only task5 > $OUT/goldens.log 2>&1
for V in h3f h6f; do
  ATTNLAB_GOLDENS=$PWD/goldens timeout 120 /tmp/c3/$V/t/task5_paged > $OUT/t5b_$V.log 2>&1; echo "exit $?" >> $OUT/t5b_$V.log
done
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 60 $3 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do
  for shape in 4 3 6 0 1; do run h0 $shape /tmp/c3/bench_h0; run h3f $shape /tmp/c3/h3f/bench_task5_paged; run h6f $shape /tmp/c3/h6f/bench_task5_paged; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 380 ] && break
done
