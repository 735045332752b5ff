#!/usr/bin/env bash
# The build with MQA's stages chosen by the memory's bandwidth a SM (carry/n.tar.xz): the rule's inputs, the part's
# tests, MQA beside bench_pf's three- and four-stage builds in turn, the full benchmark, torch's backends beside it.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/n.tar.xz
N=$PWD/carry/n
[ -x /usr/bin/bwrap ] || install -m 755 $N/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$N/null
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; $N/attrs; } | tee "$OUT/gpu.txt"
timeout -s KILL 120 $N/task5_paged > "$OUT/t5b_reference.log" 2>&1; echo "5b tests rc=$?"; grep -E "passed|failed" "$OUT/t5b_reference.log" | tail -n 2
row() { grep -E "pages of 64|contiguous" "$1" | head -2 | awk '{for(i=1;i<=NF;i++) if($i=="ms") {print $(i-1), $(i+4)}}' | tr '\n' ' '; }
for r in 1 2 3; do for b in final s3 s4; do
  case $b in final) timeout -s KILL 60 $N/bench_task5_paged --shape 4 > /tmp/mqa_${b}_r$r.log 2>&1;;
    s3) DIAG_MQA3=1 timeout -s KILL 60 carry/pf/bench_pf --shape 4 > /tmp/mqa_${b}_r$r.log 2>&1;;
    s4) timeout -s KILL 60 carry/pf/bench_pf --shape 4 > /tmp/mqa_${b}_r$r.log 2>&1;; esac
  echo "MQA $b r$r rc=$? $(row /tmp/mqa_${b}_r$r.log)"
done; done | tee "$OUT/mqa_stages.txt"
cat /tmp/mqa_*.log > "$OUT/mqa_stages_all.log"
timeout -s KILL 150 $N/bench_task5_paged > "$OUT/bench5.log" 2>&1; echo "bench rc=$?"; grep -E "^B=" "$OUT/bench5.log" | cut -c1-100 | head -14
ATTNLAB_LIB=$N/libattnlab.so timeout -s KILL 150 python3 tools/vs_torch/paged_decode.py > "$OUT/paged_decode_py.log" 2>&1; echo "paged_decode.py rc=$?"; grep -A3 "MQA" "$OUT/paged_decode_py.log" | grep -v Warn | cut -c1-120
