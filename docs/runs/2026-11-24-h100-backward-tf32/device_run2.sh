#!/bin/bash
# One device command (the second: S and dP in fresh accumulators per 32 head dims as the rung, the first version beside it;
# torch not again): the backward ladder's 3xTF32 rung beside the FFMA reference (ragged checks against float64,
# accuracy, timings: `bench` = build/reference/bin/ladder_task4_backward_tf32, built for sm_90 and stripped) and torch's
# float32 SDPA backward (tools/sdpa_backward.py), compute-sanitizer memcheck and racecheck on the rung, and the 4c tests'
# fresh, long and errors suites (no goldens needed) on a runner built on task4/ladder/backward/submission_backward_tf32.cu.
set -u
C=$PWD/carry/bwd-tf32; O=$OUT; mkdir -p $O
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt 2>&1; cat $O/gpu.txt
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $O/$name.log 2>&1; local rc=$?; echo "[$name] rc=$rc $((SECONDS-s))s"; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
step memcheck 60 $CS --tool memcheck --error-exitcode 9 $C/bench --sanitize; tail -n 1 $O/memcheck.log
step bench 300 $C/bench
grep -E "MISMATCH|FAILED|every kernel|^head_dim|^B=|ms \(|faster" $O/bench.log | cut -c1-230
[ -x /usr/bin/bwrap ] || install -m 755 $C/bwrap /usr/bin/bwrap
for suite in fresh long errors; do
  step suite_$suite 90 env ATTNLAB_RUNNER_DIR=$C/tf32-runner ATTNLAB_NULL_RUNNER_DIR=$C/null-runners ATTNLAB_SUITE=$suite GRADER_SEED=24 $C/task4_backward
  grep -E "^task4-backward: |passed|failed|error" $O/suite_$suite.log | tail -n 12 | cut -c1-200
done
step racecheck 60 $CS --tool racecheck --error-exitcode 9 $C/bench --sanitize; tail -n 1 $O/racecheck.log
