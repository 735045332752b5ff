#!/bin/bash
# device_run_hopper.sh — the bf16 ladder's Hopper rungs on a GPU in one command (course staff): every rung checked at
# the ragged shapes (check_ladder_task4_bf16), then timed at the torch anchors (ladder_task4_bf16 --only=RUNG), each
# in its own process under `timeout` (a rung that fails or hangs hides none of the others), then torch's SDPA
# backends in the same session (tools/sdpa_bf16.py), then optionally Nsight Compute on one kernel.
# Usage (from the repository root of the device machine, binaries built here and carried):
#   bash $C/device_run_hopper.sh C TAG [RUNGS="4 6 7 8 9a 9 9b reference"] [NCU_KERNEL=pingpong_kernel NCU_RUNG=9] [NCU_SET=full]
#   C: the carried folder (check_ladder_task4_bf16, ladder_task4_bf16); TAG: the logs' prefix under $OUT.
# The last lines printed are the summary table (TFLOP/s per rung and shape) and every check's verdict.
C=$1; TAG=$2
RUNGS=${RUNGS:-"4 6 7 8 9a 9 9b reference"}
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
[ -z "$NO_TORCH" ] && { timeout 150 python3 tools/sdpa_bf16.py > $L/torch.log 2>&1; echo "torch rc=$?"; }
if [ -n "$NCU_KERNEL" ]; then
  timeout ${NCU_TIMEOUT:-240} /usr/local/cuda/bin/ncu --set ${NCU_SET:-full} -k regex:$NCU_KERNEL -c 1 -o $L/ncu_$NCU_RUNG \
    $C/ladder_task4_bf16 --only=$NCU_RUNG --one > $L/ncu_run.log 2>&1; echo "ncu rc=$?"
  /usr/local/cuda/bin/ncu --import $L/ncu_$NCU_RUNG.ncu-rep --print-details all > $L/ncu_$NCU_RUNG.txt 2>&1
fi
# the summary: every check's verdict, then one line per kernel and shape
grep -h "FAIL\|ERROR\|passed" $L/check_*.log | head -40
for f in $L/ladder_*.log; do grep -E "^B=|TFLOP/s|MISMATCH|rror" $f; done | sed -E 's/ +/ /g; s/\(min [^)]*\) //; s/= [0-9.]+% of SGEMM//' | cut -c1-150
grep -E "^B=|TFLOP" $L/torch.log 2>/dev/null | sed -E 's/ +/ /g'
(cd $OUT && tar czf $TAG.tgz $TAG && rm -rf $TAG)
