#!/usr/bin/env bash
# H200: 5b's kept build (four stages at MQA, 3d4c338; binaries carry/v.tar.xz, calibration runners carry/cal.tar.xz):
# calibration cases, the part's tests, MQA three vs four stages (bench_pf, DIAG_MQA3), the full benchmark, torch's
# backends beside it (paged_decode.py), the grader's reference times for 5b.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/v.tar.xz; tar -C . -xJf carry/cal.tar.xz
V=$PWD/carry/v
[ -x /usr/bin/bwrap ] || install -m 755 $V/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$PWD/null
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
timeout -s KILL 190 python3 tools/controls/check_controls.py --prebuilt --only task5b_calibration_plan --only task5b_calibration_group > "$OUT/calibration.log" 2>&1; echo "calibration rc=$?"; tail -n 5 "$OUT/calibration.log"
export ATTNLAB_NULL_RUNNER_DIR=$V/null
timeout -s KILL 120 $V/task5_paged > "$OUT/t5b_reference.log" 2>&1; echo "5b tests rc=$?"; tail -n 3 "$OUT/t5b_reference.log" | head -2
row() { grep -E "pages of 64|contiguous" "$1" | head -2 | awk '{for(i=1;i<=NF;i++) if($i=="ms") {print $(i-1), $(i+4)}}' | tr '\n' ' '; }
for r in 1 2 3; do for st in 3 4; do
  if [ $st = 3 ]; then DIAG_MQA3=1 timeout -s KILL 60 carry/pf/bench_pf --shape 4 > /tmp/mqa_s${st}_r$r.log 2>&1
  else timeout -s KILL 60 carry/pf/bench_pf --shape 4 > /tmp/mqa_s${st}_r$r.log 2>&1; fi
  echo "MQA stages=$st r$r rc=$? $(row /tmp/mqa_s${st}_r$r.log)"
done; done | tee "$OUT/mqa_stages.txt"
cat /tmp/mqa_s*.log > "$OUT/mqa_stages_all.log"
timeout -s KILL 150 $V/bench_task5_paged > "$OUT/bench5.log" 2>&1; echo "bench rc=$?"; grep -E "^B=" "$OUT/bench5.log" | cut -c1-112 | head -14
ATTNLAB_LIB=$V/libattnlab.so timeout -s KILL 150 python3 tools/vs_torch/paged_decode.py > "$OUT/paged_decode_py.log" 2>&1; echo "paged_decode.py rc=$?"; tail -n 14 "$OUT/paged_decode_py.log" | cut -c1-180
cp grader/reference_times.json /tmp/rt.json
timeout -s KILL 90 python3 tools/gpu/reference_times.py --grader $V/grader --bin-dir $V --file /tmp/rt.json --part 5b > "$OUT/reftimes.log" 2>&1; echo "reftimes rc=$?"; tail -n 6 "$OUT/reftimes.log"
cp /tmp/rt.json "$OUT/reference_times.json"
