#!/bin/bash
# bf16 device run: tests (reference + 3 controls), ladder, [torch], [ncu]. Usage: run.sh TAG [torch] [ncu]
# Copied from the carry folder used on the device (/work/main/carry/bf16/run.sh, 2026-11-22 runs 4-5): the binaries
# (task4_bf16, ladder_task4_bf16, runner_task4 of the reference in ref/ and of each control in ctl_*/, the bf16
# goldens, tools/vs_torch/sdpa_bf16.py) are built on the course machine for sm_90 and carried; run as run.sh TAG torch ncu.
C=$PWD/carry/bf16; TAG=$1; shift
export ATTNLAB_GOLDENS=$C/goldens GRADER_SEED=18
nvidia-smi -L > $OUT/$TAG-gpu.log; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $OUT/$TAG-gpu.log
ATTNLAB_RUNNER_DIR=$C/ref $C/task4_bf16 > $OUT/$TAG-test_ref.log 2>&1; echo "test_ref rc=$?"; tail -2 $OUT/$TAG-test_ref.log
for c in accumulator no_rescale partial_tile_dropped; do
  ATTNLAB_RUNNER_DIR=$C/ctl_$c $C/task4_bf16 > $OUT/$TAG-control_bf16_$c.log 2>&1; echo "control $c rc=$? (must fail)"; grep -c "\[failed" $OUT/$TAG-control_bf16_$c.log
done
$C/ladder_task4_bf16 > $OUT/$TAG-ladder.log 2>&1; echo "ladder rc=$?"
for a in "$@"; do
  if [ $a = torch ]; then python3 $C/sdpa_bf16.py > $OUT/$TAG-torch.log 2>&1; echo "torch rc=$?"; fi
  if [ $a = ncu ]; then timeout 200 /usr/local/cuda/bin/ncu --kernel-name regex:fa2 --launch-count 1 --print-details all --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_ldsm.sum --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats $C/ladder_task4_bf16 --one > $OUT/$TAG-ncu.log 2>&1; echo "ncu rc=$?"; fi
done
grep -E "^B=|TFLOP/s" $OUT/$TAG-ladder.log | grep -v "^ *1 wmma\|^ *2 mma" | sed -E 's/ +/ /g' | cut -c1-160
