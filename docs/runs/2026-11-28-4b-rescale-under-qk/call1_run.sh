#!/usr/bin/env bash
# call 1: 4b's forward at D = 128 without a mask on 176-key tiles (FlashAttention-3's choice), O stored from registers
# (key_tiles_176_diag.patch; DIAG_BC176=1), and the 128-key kernel with Q from shared memory (DIAG_BC176=2, the
# control: 176-key tiles cannot hold Q in registers), against the reference; ragged checks, then three rounds in turn.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/f176.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
for v in 1 2; do
  DIAG_BC176=$v timeout -s KILL 120 carry/f176/check_176 ref > "$OUT/logs/check_v$v.log" 2>&1; echo "check v$v rc=$?"
  tail -2 "$OUT/logs/check_v$v.log"
done
for r in 1 2 3; do
  timeout -s KILL 60 carry/f176/bench_ref --grid > "$OUT/logs/fwd_ref_r$r.log" 2>&1 || echo "ref r$r rc=$?"
  DIAG_BC176=1 timeout -s KILL 60 carry/f176/bench_176 --grid > "$OUT/logs/fwd_176_r$r.log" 2>&1 || echo "176 r$r rc=$?"
  DIAG_BC176=2 timeout -s KILL 60 carry/f176/bench_176 --grid > "$OUT/logs/fwd_qsmem_r$r.log" 2>&1 || echo "qsmem r$r rc=$?"
done
grep -l MISMATCH "$OUT"/logs/*.log
cat "$OUT/logs/fwd_ref_r1.log" | head -40
for f in "$OUT"/logs/fwd_*; do echo "== $f"; grep -i "tflop\|D=128\|·128" "$f" | head -20; done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
