#!/usr/bin/env bash
# call 11: 4b's rung 10c (three consumers, D = 64, long rows) with 3 and 4 K/V stages (fwd_10c_stages_diag.patch,
# DIAG_ST10C=3|4) against the kept build's 2 (bench_head), three rounds in turn at the D = 64 shapes that take 10c.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/fs.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
S="--shape=4,32,4096,64 --shape=2,32,8192,64 --shape=1,32,16384,64"
for r in 1 2 3; do
  timeout -s KILL 60 carry/fs/bench_head $S > "$OUT/logs/fwd_st2_r$r.log" 2>&1 || echo "st2 r$r rc=$?"
  for v in 3 4; do DIAG_ST10C=$v timeout -s KILL 60 carry/fs/bench_st $S > "$OUT/logs/fwd_st${v}_r$r.log" 2>&1 || echo "st$v r$r rc=$?"; done
done
grep -l MISMATCH "$OUT"/logs/*.log
for v in st2 st3 st4; do echo "== $v"; for r in 1 2 3; do grep -o "[0-9.]* TFLOP/s   rel" "$OUT/logs/fwd_${v}_r$r.log" | awk '{printf "%s ", $1}'; echo; done; done
grep -c " ok$" "$OUT"/logs/fwd_*.log | tr '\n' ' '
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
