#!/usr/bin/env bash
# 4d: dQ finished in the key tiles, counted before the next tile's adds (new), the same without the release fence
# (nofence: a diagnostic, the fence's cost) and the build before (old): the part's tests on the new build with its
# goldens, ragged shapes through the benchmark's float64 check, then the benchmarks in turn, three rounds
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -x /usr/bin/bwrap ] || install -m 755 carry/k3/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$PWD/carry/k3/null ATTNLAB_GOLDENS=$PWD/carry/k3/goldens
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
timeout 240 ./carry/k3/task4_bf16_backward > "$OUT/t4d_reference.log" 2>&1; echo "tests rc=$?"; tail -n 2 "$OUT/t4d_reference.log"
grep -E "failed \]|error  \]" "$OUT/t4d_reference.log" | head -5
timeout 120 ./carry/k3/bench_new --shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=1,2,4100,128 --shape=3,1,160,64 --shape=1,2,1024,128 > "$OUT/ragged_new.log" 2>&1; echo "ragged rc=$?"
for r in 1 2 3; do for v in new nofence old; do
  timeout 150 ./carry/k3/bench_$v > "$OUT/bench_${v}_$r.log" 2>&1; echo "$v $r rc=$?"
done; done
grep -E "^  B=" "$OUT/ragged_new.log" | sed 's/  */ /g' | cut -c1-110
for v in new nofence old; do echo "== $v"; paste -d' ' <(grep -E "^  B=" "$OUT/bench_${v}_1.log" | sed 's/  */ /g' | awk '{print $1,$2,$3,$4,$5}') <(for r in 1 2 3; do grep -E "^  B=" "$OUT/bench_${v}_$r.log" | grep -o "[0-9.]* TFLOP/s" | cut -d' ' -f1 > "$OUT/col_$r"; done; paste "$OUT/col_1" "$OUT/col_2" "$OUT/col_3"); done
grep -h "ok$\|MISMATCH\|rror" "$OUT"/bench_new_1.log | grep -vc "ok$"
