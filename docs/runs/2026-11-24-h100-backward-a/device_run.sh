#!/bin/bash
# device run (a), Task 4's backward bonus: tests of the reference and the skeleton, the five controls (golden suite),
# compute-sanitizer on small shapes, the quick benchmark and the quick ladder. Each step logged; none hides another.
set -u
C=$PWD/carry/bwd-kernel; W=/tmp/w; O=$OUT/logs; mkdir -p $O $W
tar -C $W -xJf $C/bin.tar.xz && B=$W/bwd-kernel
export ATTNLAB_GOLDENS=$W/goldens ATTNLAB_NULL_RUNNER_DIR=$B/null-runners PYTHONUNBUFFERED=1 GRADER_SEED=24
[ -x /usr/bin/bwrap ] || install -m 755 $B/bwrap /usr/bin/bwrap
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt 2>&1; cat $O/gpu.txt
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $O/$name.log 2>&1; local rc=$?; echo "[$name] rc=$rc $((SECONDS-s))s: $(grep -E '^task4-backward: |^[a-z_]+: ' $O/$name.log | tail -n1 | cut -c1-150)"; }
step goldens 150 python3 $B/tools/make_goldens.py --only task4 --out $W/goldens
step test_ref 300 env ATTNLAB_RUNNER_DIR=$B/ref $B/ref/task4_backward
grep -E "^\s*\[(failed|error)" -A3 $O/test_ref.log | head -40
grep -E "^\s*\[passed" $O/test_ref.log | cut -c1-200 | head -30
step test_skel 200 env ATTNLAB_RUNNER_DIR=$B/skel $B/skel/task4_backward
echo "skeleton: $(grep -c '^\s*\[passed' $O/test_skel.log) passed, $(grep -c 'not implemented' $O/test_skel.log) say not implemented"
for c in no_row_term ds_without_p no_causal_mask dq_race partial_key_tile_dropped; do
  step ctl_$c 150 env ATTNLAB_RUNNER_DIR=$B/ctl_$c ATTNLAB_SUITE=golden $B/ref/task4_backward
  grep -E "^\s*\[(failed|error)" $O/ctl_$c.log | cut -c1-220 | head -4
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck synccheck; do step san_$tool 120 $CS --tool $tool --error-exitcode 9 $B/drive_bwd; tail -n 3 $O/san_$tool.log; done
step bench_quick 200 $B/ref/bench_task4_backward --quick
grep -E "^B=|ms \(" $O/bench_quick.log | cut -c1-200
step ladder_quick 300 $B/ref/ladder_task4_backward --quick
grep -E "^B=|ms \(|not timed" $O/ladder_quick.log | cut -c1-200
cd $OUT && tar -czf logs.tgz logs && rm -rf logs
