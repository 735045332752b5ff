#!/bin/bash
# device run (b), Task 4's backward bonus: tests of the reference and the skeleton, the five controls (golden suite) with
# the reason each must give, compute-sanitizer, the benchmark (B=4 S=128 and B=64 S=4096), the ladder, torch's float32
# SDPA backward in the same session. Each step logged; none hides another.
set -u
C=$PWD/carry/bwd-kernel; W=/tmp/w; O=$OUT/logs; mkdir -p $O $W
tar -C $W -xJf $C/bin.tar.xz && B=$W/bwd-kernel
export ATTNLAB_GOLDENS=$W/goldens ATTNLAB_NULL_RUNNER_DIR=$B/null-runners PYTHONUNBUFFERED=1 GRADER_SEED=24
[ -x /usr/bin/bwrap ] || install -m 755 $B/bwrap /usr/bin/bwrap
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt 2>&1; cat $O/gpu.txt
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $O/$name.log 2>&1; local rc=$?; echo "[$name] rc=$rc $((SECONDS-s))s: $(grep -E '^task4-backward: ' $O/$name.log | tail -n1 | cut -c1-150)"; }
step goldens 150 python3 $B/tools/make_goldens.py --only task4 --out $W/goldens
step test_ref 300 env ATTNLAB_RUNNER_DIR=$B/ref $B/ref/task4_backward
grep -E "^\s*\[(failed|error)" -A3 $O/test_ref.log | head -20
step test_skel 200 env ATTNLAB_RUNNER_DIR=$B/skel $B/skel/task4_backward
echo "skeleton: $(grep -c '^\s*\[passed' $O/test_skel.log) passed, $(grep -c 'not implemented' $O/test_skel.log) say not implemented"
for ce in "no_row_term|dK (dV is right)" "ds_without_p|dK (dV is right)" "no_causal_mask|dV [causal]" "dq_race|(dK and dV are right)" "partial_key_tile_dropped|dV: "; do
  c=${ce%%|*}; e=${ce#*|}
  step ctl_$c 150 env ATTNLAB_RUNNER_DIR=$B/ctl_$c ATTNLAB_SUITE=golden $B/ref/task4_backward
  echo "   control $c: $(grep -cF -- "$e" $O/ctl_$c.log) failures say '$e'"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck; do step san_$tool 120 $CS --tool $tool --error-exitcode 9 $B/drive_bwd; tail -n 1 $O/san_$tool.log; done
step bench 300 $B/ref/bench_task4_backward
grep -E "^GPU|^B=|ms \(" $O/bench.log | cut -c1-200
step torch 300 python3 $B/tools/sdpa_backward.py
grep -E "^GPU|^B=|torch" $O/torch.log | cut -c1-220
step ladder 300 $B/ref/ladder_task4_backward
grep -E "^B=|ms \(|not timed" $O/ladder.log | cut -c1-200
cd $OUT && tar -czf logs.tgz logs && rm -rf logs
