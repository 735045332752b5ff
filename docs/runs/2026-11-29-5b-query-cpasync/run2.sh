#!/bin/bash
# Call 2: the query by cp.async (q), and blocks of 8 warps for groups past one row tile (w8: MQA; DIAG_W4=1 runs
# w8's binary on 4-warp blocks, which is q). Each build's 5b tests, then in turn: MQA L0 (HEAD) / q / w8 / w8 W4;
# B = 1, ragged, B = 64, B = 8: L0 / q.
start=$SECONDS
D=/tmp/d2; mkdir -p $D && tar -C /tmp -xJf carry/d2.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
[ -x /usr/bin/bwrap ] || install -m 755 $D/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$D/null
python3 tools/goldens/make_goldens.py --only task5 > $OUT/goldens.log 2>&1
for V in q w8; do
  ATTNLAB_GOLDENS=$PWD/goldens timeout 150 $D/$V/t/task5_paged > $OUT/t5b_$V.log 2>&1; echo "exit $?" >> $OUT/t5b_$V.log
done
echo "tests done at $((SECONDS - start)) s" >> $OUT/ab.log
run() { echo "== $1 shape=$2 $3" >> $OUT/ab.log; env $3 timeout 60 $4 --shape $2 2>&1 | grep -E "ms |rror" | sed -E 's/\| host inside.*//' | head -2 >> $OUT/ab.log; }
for r in 1 2 3; do
  for shape in 4; do
    run L0 $shape X=0 $D/bench_L0; run q $shape X=0 $D/q/bench_task5_paged; run w8 $shape X=0 $D/w8/bench_task5_paged; run w8W4 $shape DIAG_W4=1 $D/w8/bench_task5_paged
  done
  for shape in 3 6 0 1; do run L0 $shape X=0 $D/bench_L0; run q $shape X=0 $D/q/bench_task5_paged; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 380 ] && break
done
