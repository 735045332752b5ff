#!/usr/bin/env bash
# call 9 (asked for an H200): call 6 again — the kept forward against the build before, --grid, two rounds in turn;
# then Task 4's tests on the reference and the skeletons.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/logs/gpu.txt"
tar -C carry -xJf carry/f176.tar.xz
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
for r in 1 2; do
  timeout -s KILL 60 carry/f176/bench_ref --grid > "$OUT/logs/fwd_before_r$r.log" 2>&1 || echo "before r$r rc=$?"
  timeout -s KILL 60 build/carry/reference/bench_task4_bf16 --grid > "$OUT/logs/fwd_kept_r$r.log" 2>&1 || echo "kept r$r rc=$?"
done
grep -l MISMATCH "$OUT"/logs/*.log
for v in before kept; do echo "== $v"; for r in 1 2; do grep -o "[0-9.]* TFLOP/s   rel" "$OUT/logs/fwd_${v}_r$r.log" | awk '{printf "%s ", $1}'; echo; done; done
grep -c " ok$" "$OUT"/logs/fwd_*.log | tr '\n' ' '; echo
ONLY_TASKS=4 SKIP_GRADE=1 SKIP_EXPLOITS=1 SKIP_CONTROLS=1 OUT=$OUT/checks \
  timeout 150 bash tools/gpu/gpu_session.sh 2>&1 | grep "^== "
cd "$OUT" && tar czf logs.tgz logs checks && rm -rf logs checks
