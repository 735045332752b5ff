#!/bin/bash
# device_run_hopper.sh — the bf16 ladder's Hopper rungs and the 4b reference on a GPU in one command (course staff):
#   1. every rung checked at the ragged shapes (check_ladder_task4_bf16: S = 1, 127, 129, Sq ≠ Sk, causal Sq > Sk,
#      D = 64 and 128), after the wgmma self-test;
#   2. every rung timed at the torch anchors (ladder_task4_bf16 --only=RUNG, B=4 H=16 S=4096/1024 D=128/64);
#   3. torch's SDPA backends in the same session (tools/vs_torch/sdpa_bf16.py);
#   4. if $C/task4_bf16 is there: the bonus's tests on the reference's runner ($C/ref/runner_task4) and on each
#      negative control's ($C/ctl_*/runner_task4; every control must fail), goldens from $C/goldens;
#   5. if NCU_KERNEL is set: Nsight Compute (--set ${NCU_SET:-full}) on one launch of that kernel in rung $NCU_RUNG.
# Each program runs in its own process under `timeout`, so a rung that fails or hangs hides none of the others.
# Usage (in the repository root of the device machine; the binaries built on the course machine and carried):
#   [RUNGS="4 6 …"] [NO_TORCH=1] [NCU_KERNEL=persistent_kernel NCU_RUNG=10b] bash C/device_run_hopper.sh C TAG
# The logs go to $OUT/TAG.tgz; the last lines printed are every check's verdict and the TFLOP/s table.
C=$1; TAG=$2
RUNGS=${RUNGS:-"4 6 7 8 9a 9 9b 9c 9d 10 10b reference"}
L=$OUT/$TAG; mkdir -p $L
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; } > $L/gpu.log 2>&1
timeout 60 $C/check_ladder_task4_bf16 selftest > $L/check_selftest.log 2>&1; echo "selftest rc=$? $(grep selftest $L/check_selftest.log | tail -1)"
for r in $RUNGS; do
  [ $r = reference ] && cr=ref || cr=$r
  timeout 90 $C/check_ladder_task4_bf16 $cr > $L/check_$r.log 2>&1; echo "check $r rc=$? $(tail -1 $L/check_$r.log)"
done
for r in $RUNGS; do
  timeout 150 $C/ladder_task4_bf16 --only=$r > $L/ladder_$r.log 2>&1; echo "ladder $r rc=$?"
done
[ -z "$NO_TORCH" ] && { timeout 150 python3 tools/vs_torch/sdpa_bf16.py > $L/torch.log 2>&1; echo "torch rc=$?"; }
if [ -x $C/task4_bf16 ]; then
  A=$(cd $C && pwd)  # the sandboxed runner needs absolute paths
  export ATTNLAB_GOLDENS=$A/goldens GRADER_SEED=18
  ATTNLAB_RUNNER_DIR=$A/ref timeout 300 $A/task4_bf16 > $L/test_ref.log 2>&1; echo "bonus tests, reference: rc=$? $(tail -1 $L/test_ref.log)"
  for d in $A/ctl_*; do
    [ -d $d ] || continue; c=$(basename $d)
    ATTNLAB_RUNNER_DIR=$d timeout 300 $A/task4_bf16 > $L/test_$c.log 2>&1
    echo "bonus tests, control $c (must fail): rc=$? $(grep -c '\[failed' $L/test_$c.log) failed; $(tail -1 $L/test_$c.log)"
  done
fi
if [ -n "$NCU_KERNEL" ]; then
  timeout ${NCU_TIMEOUT:-240} /usr/local/cuda/bin/ncu --set ${NCU_SET:-full} -k regex:$NCU_KERNEL -c 1 -o $L/ncu_$NCU_RUNG \
    $C/ladder_task4_bf16 --only=$NCU_RUNG --one > $L/ncu_run.log 2>&1; echo "ncu rc=$?"
  /usr/local/cuda/bin/ncu --import $L/ncu_$NCU_RUNG.ncu-rep --print-details all > $L/ncu_$NCU_RUNG.txt 2>&1
fi
# the summary: every check's verdict, then one line per kernel and shape
grep -h "FAIL\|ERROR\|passed" $L/check_*.log | sort | uniq -c
for f in $L/ladder_*.log; do grep -E "TFLOP/s|MISMATCH|rror" $f; done | sed -E 's/ +/ /g; s/\(min [^)]*\) //; s/= [0-9.]+% of SGEMM//' | cut -c1-110
grep -E "^B=|TFLOP" $L/torch.log 2>/dev/null | sed -E 's/ +/ /g'
(cd $OUT && tar czf $TAG.tgz $TAG && rm -rf $TAG)
