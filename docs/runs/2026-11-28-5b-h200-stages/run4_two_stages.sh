#!/usr/bin/env bash
# 5b's stages where shared memory is short: the part's tests on a build that believes a block has 99 KB (sm_86/89:
# two stages at D = 128), and on the final build; the two-stage build's benchmark at B = 64 and MQA beside the final's.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/r2.tar.xz
R=$PWD/carry/r2
[ -x /usr/bin/bwrap ] || install -m 755 $R/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$R/null
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for b in s2 final; do timeout -s KILL 120 $R/$b/task5_paged > "$OUT/t5b_$b.log" 2>&1; echo "5b tests $b rc=$?"; grep -E "^task5-paged:" "$OUT/t5b_$b.log"; done
for s in 0 4; do timeout -s KILL 60 $R/s2/bench99 --shape $s > /tmp/b_s2_$s.log 2>&1; timeout -s KILL 60 $R/final/bench_task5_paged --shape $s > /tmp/b_final_$s.log 2>&1
  grep -hE "pages of 64|contiguous" /tmp/b_s2_$s.log /tmp/b_final_$s.log | cut -c1-110; done | tee "$OUT/bench.txt"
