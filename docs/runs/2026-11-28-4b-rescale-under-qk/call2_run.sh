#!/usr/bin/env bash
# call 2: 4b's forward with O rescaled after the next Q·Kᵀ is issued (FlashAttention-3's order; late_rescale_diag.patch,
# -DDIAG_LATE_RESCALE), alone (bench_late) and with 176-key tiles at D = 128 without a mask (DIAG_BC176=1), against
# the reference (bench_ref); ragged checks, then three rounds in turn at issue 31's twelve points (--grid).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/f176.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
timeout -s KILL 120 carry/f176/check_late ref > "$OUT/logs/check_late.log" 2>&1; echo "check late rc=$?"
DIAG_BC176=1 timeout -s KILL 120 carry/f176/check_late ref > "$OUT/logs/check_late176.log" 2>&1; echo "check late176 rc=$?"
tail -1 "$OUT"/logs/check_*.log
for r in 1 2 3; do
  timeout -s KILL 60 carry/f176/bench_ref --grid > "$OUT/logs/fwd_ref_r$r.log" 2>&1 || echo "ref r$r rc=$?"
  timeout -s KILL 60 carry/f176/bench_late --grid > "$OUT/logs/fwd_late_r$r.log" 2>&1 || echo "late r$r rc=$?"
  DIAG_BC176=1 timeout -s KILL 60 carry/f176/bench_late --grid > "$OUT/logs/fwd_late176_r$r.log" 2>&1 || echo "late176 r$r rc=$?"
done
grep -l MISMATCH "$OUT"/logs/*.log
for v in ref late late176; do echo "== $v"; for r in 1 2 3; do grep -o "[0-9.]* TFLOP/s   rel" "$OUT/logs/fwd_${v}_r$r.log" | awk '{printf "%s ", $1}'; echo; done; done
grep -c " ok$" "$OUT"/logs/fwd_*.log
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
