#!/bin/bash
# Call 4: the kept build (tools/gpu/pack_gpu.sh at 4b8c519, with 5b's negative controls and calibration cases):
# Tasks 5, 6, 5b and 6b's tests on the reference and the skeletons, 5b's controls and calibration cases graded,
# bench_task5_paged, paged_decode.py.
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_EXPLOITS=1 ONLY_CONTROLS="task5b_kv_head_h task5b_reads_past_length task5b_logical_page task5b_calibration_plan task5b_calibration_group" \
  OUT=$OUT/s bash tools/gpu/gpu_session.sh paged > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/summary.txt $OUT/ 2>/dev/null
(cd $OUT/s && tar -xzf logs.tar.gz ./paged_decode_torch.log ./controls.log 2>/dev/null; cp paged_decode_torch.log controls.log $OUT/ 2>/dev/null)
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
