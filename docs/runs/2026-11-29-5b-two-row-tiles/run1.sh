#!/bin/bash
# Call 1: MQA on blocks of two row tiles. Each variant's 5b tests (new, rt3, rt4q, rt6q: build1.sh), then in turn:
# MQA (--shape 4) on base / new / rt3 / rt4q / rt6q; the other rows on base / new. Rounds while time lasts.
start=$SECONDS
D=/tmp/c1; mkdir -p $D && tar -C /tmp -xJf carry/c1.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
[ -x /usr/bin/bwrap ] || install -m 755 $D/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$D/null
python3 tools/goldens/make_goldens.py --only task5 > $OUT/goldens.log 2>&1
echo "goldens done at $((SECONDS - start)) s" >> $OUT/ab.log
for V in new rt3 rt4q rt6q; do
  ATTNLAB_GOLDENS=$PWD/goldens timeout 120 $D/$V/t/task5_paged > $OUT/t5b_$V.log 2>&1; echo "exit $?" >> $OUT/t5b_$V.log
  tail -3 $OUT/t5b_$V.log | tr '\n' ' ' >> $OUT/ab.log; echo " <- tests $V" >> $OUT/ab.log
done
echo "tests done at $((SECONDS - start)) s" >> $OUT/ab.log
run() { echo "== $1 shape=$2" >> $OUT/ab.log; timeout 60 $D/$1/bench_task5_paged --shape $2 2>&1 | grep -E "ms |rror" | sed -E 's/\| host inside.*//' | head -3 >> $OUT/ab.log; }
for r in 1 2 3; do
  for V in base new rt3 rt4q rt6q; do run $V 4; done
  for shape in 3 6 0 1 5; do run base $shape; run new $shape; done
  echo "round $r done at $((SECONDS - start)) s" >> $OUT/ab.log
  [ $((SECONDS - start)) -gt 420 ] && break
done
