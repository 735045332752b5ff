#!/usr/bin/env bash
# call 7: 4b's forward at D = 128 without a mask on wider key tiles with the rescale under Q·Kᵀ (the kept order),
# wide_key_tiles_diag.patch + wgmma_rs_wide_diag.cuh (-DDIAG_WIDE; the header's path in the patch was /tmp/d176/):
# DIAG_BC=160 (Q in registers, 8 registers spilled), 161 (160 keys, Q from shared memory), 176 (Q in registers, O from
# the registers, 38 registers spilled), against the kept build (bench_head); ragged checks, then three rounds in turn.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/fw.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
for v in 160 161 176; do
  DIAG_BC=$v timeout -s KILL 120 carry/fw/check_wide ref > "$OUT/logs/check_$v.log" 2>&1; echo "check $v rc=$? $(tail -n 1 "$OUT/logs/check_$v.log")"
done
for r in 1 2 3; do
  timeout -s KILL 60 carry/fw/bench_head --grid > "$OUT/logs/fwd_head_r$r.log" 2>&1 || echo "head r$r rc=$?"
  for v in 160 161 176; do
    DIAG_BC=$v timeout -s KILL 60 carry/fw/bench_wide --grid > "$OUT/logs/fwd_${v}_r$r.log" 2>&1 || echo "$v r$r rc=$?"
  done
done
grep -l MISMATCH "$OUT"/logs/*.log
for v in head 160 161 176; do echo "== $v"; for r in 1 2 3; do grep -o "[0-9.]* TFLOP/s   rel" "$OUT/logs/fwd_${v}_r$r.log" | head -6 | awk '{printf "%s ", $1}'; echo; done; done
grep -c " ok$" "$OUT"/logs/fwd_*.log | tr '\n' ' '
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
