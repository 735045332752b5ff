#!/bin/bash
# Call 3: the fix for four stages' illegal instruction. 5b's tests on fix and fixh (build3.sh); then in turn, every
# benchmark row on base (build1.sh) and fix, and MQA on fixh (four stages, the H100's choice). Rounds while time lasts.
start=$SECONDS
D=/tmp/c3; mkdir -p $D && tar -C /tmp -xJf carry/c3.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
[ -x /usr/bin/bwrap ] || install -m 755 $D/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$D/null
python3 tools/goldens/make_goldens.py --only task5 > $OUT/goldens.log 2>&1
for V in fix fixh; do
  ATTNLAB_GOLDENS=$PWD/goldens timeout 120 $D/$V/t/task5_paged > $OUT/t5b_$V.log 2>&1; echo "exit $?" >> $OUT/t5b_$V.log
  tail -2 $OUT/t5b_$V.log | tr '\n' ' ' >> $OUT/ab.log; echo " <- tests $V" >> $OUT/ab.log
done
echo "tests done at $((SECONDS - start)) s" >> $OUT/ab.log
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 60 $D/$1/bench_task5_paged --shape $2 2>&1 | grep -E "ms |rror" | sed -E 's/\| host inside.*//' | head -3 >> $OUT/ab.log; }
for r in 1 2 3; do
  for shape in 4 3 6 0 1 2 5; do run base $shape; run fix $shape; done
  run fixh 4
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 400 ] && break
done
