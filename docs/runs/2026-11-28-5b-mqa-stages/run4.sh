#!/usr/bin/env bash
# 5b with four stages where a group is larger than one row tile (MQA): the part's tests, the benchmark twice, torch's
# backends and attnlab through paged_decode.py in the same call, and the grader's reference times for 5b.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/v.tar.xz
V=$PWD/carry/v
[ -x /usr/bin/bwrap ] || install -m 755 $V/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$V/null
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 300 $V/task5_paged > "$OUT/t5b_reference.log" 2>&1; echo "5b tests rc=$?"; tail -n 3 "$OUT/t5b_reference.log" | head -2
for r in 1 2; do timeout 200 $V/bench_task5_paged > "$OUT/bench5_r$r.log" 2>&1; echo "bench r$r rc=$?"; grep -E "^B=" "$OUT/bench5_r$r.log" | grep -v "f32" | cut -c1-112 | head -20; done
ATTNLAB_LIB=$V/libattnlab.so timeout 300 python3 tools/vs_torch/paged_decode.py > "$OUT/paged_decode_py.log" 2>&1; echo "paged_decode.py rc=$?"; tail -n 30 "$OUT/paged_decode_py.log" | cut -c1-200
cp grader/reference_times.json /tmp/rt.json
timeout 300 python3 tools/gpu/reference_times.py --grader $V/grader --bin-dir $V --file /tmp/rt.json --part 5b > "$OUT/reftimes.log" 2>&1; echo "reftimes rc=$?"; tail -n 8 "$OUT/reftimes.log"
cp /tmp/rt.json "$OUT/reference_times.json"
