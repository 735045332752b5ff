#!/usr/bin/env bash
# 4d: paired walks (a block walks two key tiles: units v and U − 1 − v) against the build before: the part's tests
# (goldens carried), 4c's tests (no goldens: those cases error; the rest run StreamScratch), ragged shapes through the
# benchmark's float64 check paired and not, then the benchmark: new (pairs where Sq ≤ 2048), new PAIR=0, new PAIR=1,
# old, in turn, three rounds
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -x /usr/bin/bwrap ] || install -m 755 carry/k4/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$PWD/carry/k4/null ATTNLAB_GOLDENS=$PWD/carry/k4/goldens
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
timeout 240 ./carry/k4/task4_bf16_backward > "$OUT/t4d_reference.log" 2>&1; echo "4d tests rc=$?"; tail -n 2 "$OUT/t4d_reference.log" | head -1
grep -E "failed \]|error  \]" "$OUT/t4d_reference.log" | head -5
timeout 240 ./carry/k4/task4_backward > "$OUT/t4c_reference.log" 2>&1; echo "4c tests rc=$?"; tail -n 2 "$OUT/t4c_reference.log" | head -1
grep -E "failed \]" "$OUT/t4c_reference.log" | head -5
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64"
for pr in 0 1; do ATTNLAB_DIAG_PAIR=$pr timeout 120 ./carry/k4/bench_new $R > "$OUT/ragged_pair$pr.log" 2>&1; echo "ragged pair=$pr rc=$? $(grep -c ' ok$' "$OUT/ragged_pair$pr.log") ok, $(grep -ci mismatch "$OUT/ragged_pair$pr.log") mismatch"; done
for r in 1 2 3; do
  timeout 150 ./carry/k4/bench_new > "$OUT/bench_new_$r.log" 2>&1; echo "new $r rc=$?"
  ATTNLAB_DIAG_PAIR=0 timeout 150 ./carry/k4/bench_new > "$OUT/bench_pair0_$r.log" 2>&1; echo "pair0 $r rc=$?"
  ATTNLAB_DIAG_PAIR=1 timeout 150 ./carry/k4/bench_new > "$OUT/bench_pair1_$r.log" 2>&1; echo "pair1 $r rc=$?"
  timeout 150 ./carry/k4/bench_old > "$OUT/bench_old_$r.log" 2>&1; echo "old $r rc=$?"
done
for v in new pair0 pair1 old; do echo "== $v"; for r in 1 2 3; do grep -E "^  B=" "$OUT/bench_${v}_$r.log" | grep -o "[0-9.]* TFLOP/s" | cut -d' ' -f1 > "$OUT/c$r"; done
  paste -d' ' <(grep -E "^  B=" "$OUT/bench_${v}_1.log" | awk '{print $1,$2,$3,$4,$5}') "$OUT/c1" "$OUT/c2" "$OUT/c3"; done
rm -f "$OUT"/c1 "$OUT"/c2 "$OUT"/c3
echo "not ok lines: $(cat "$OUT"/bench_*.log | grep -E '^  B=' | grep -vc ' ok$')"
