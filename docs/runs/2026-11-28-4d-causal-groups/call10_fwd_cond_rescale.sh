#!/usr/bin/env bash
# call 10: 4b's forward with O rescaled only when a warp's row maxima moved (fwd_cond_rescale.patch, bench_fwd_cond)
# against the kept forward (bench_fwd_ref, a5cb1cf), three rounds in turn at issue 31's twelve points (--grid)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/f.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
for r in 1 2 3; do for b in ref cond; do
  timeout -s KILL 60 carry/f/bench_fwd_$b --grid > "$OUT/logs/fwd_${b}_r$r.log" 2>&1 || echo "fwd $b r$r rc=$?"
done; done
grep -c " ok$" "$OUT"/logs/fwd_cond_r*.log; grep -l MISMATCH "$OUT"/logs/*.log
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
