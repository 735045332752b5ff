#!/bin/bash
# Call 2: (a) three GPU exploits on 19554fa's pack (tools/gpu/pack_gpu.sh from a clean tree, PACK_EXPLOITS = the three);
# (b) 5b's tests on the evict-first build (the working tree's task5_paged and runner_task5); (c) bench_h0 (none),
# bench_h3 (evict_first everywhere) and bench_h5 (the evict-first build: evict_first where a group has one row block),
# rounds in turn at MQA, B = 1, the ragged batch, B = 64 and B = 8, while the call's time lasts.
start=$SECONDS
tar -C /tmp -xJf carry/hint2.tar.xz   # → /tmp/hint2/bench_h0, bench_h3, bench_h5; t/task5_paged, t/runner_task5
ONLY_TASKS="5 6" SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 \
  ONLY_EXPLOITS="task5_bf16_cache_when_timed|task5b_half_keys_when_timed|task6b_half_heads_when_timed" \
  OUT=$OUT/s bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
cp $OUT/s/exploits.log $OUT/s/gpu.txt $OUT/ 2>/dev/null
echo "session done at $((SECONDS - start)) s" >> $OUT/ab.log
ATTNLAB_GOLDENS=$PWD/goldens timeout 200 /tmp/hint2/t/task5_paged > $OUT/t5b_evict_first.log 2>&1; echo "exit $?" >> $OUT/t5b_evict_first.log
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 60 /tmp/hint2/bench_$1 --shape $2 2>&1 | grep -E "ms " | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do
  for shape in 4 3 6 0 1; do for b in h0 h3 h5; do run $b $shape; done; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 450 ] && break
done
rm -rf $OUT/s/grade 2>/dev/null; (cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
