#!/usr/bin/env bash
# call 10: 4d's key-tile kernel taking DIAG_UPB (key block, head) units one after another (bwd_units_per_block_diag.patch:
# the next unit's K and V asked for as soon as this unit's walk ends, dK and dV out through the Q / dO stages, the next
# unit's first row tiles after the TMA unit read them), against the kept build (bench_bwd_head): float64 checks at 13
# ragged shapes for 2 and 3 units a block, then two rounds in turn at issue 31's twelve points.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
tar -C carry -xJf carry/fb.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/logs/gpu.txt"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64"
for u in 2 3; do
  DIAG_UPB=$u timeout -s KILL 90 carry/fb/bench_bwd_upb $R > "$OUT/logs/ragged_upb$u.log" 2>&1
  echo "upb$u ragged rc=$? $(grep -c ' ok$' "$OUT/logs/ragged_upb$u.log") ok, $(grep -ci 'mismatch\|fail' "$OUT/logs/ragged_upb$u.log") bad"
done
for r in 1 2; do
  timeout -s KILL 60 carry/fb/bench_bwd_head > "$OUT/logs/bwd_head_r$r.log" 2>&1 || echo "head r$r rc=$?"
  for u in 1 2 3; do
    DIAG_UPB=$u timeout -s KILL 60 carry/fb/bench_bwd_upb > "$OUT/logs/bwd_upb${u}_r$r.log" 2>&1 || echo "upb$u r$r rc=$?"
  done
done
grep -il "mismatch" "$OUT"/logs/*.log
for v in head upb1 upb2 upb3; do echo "== $v"; for r in 1 2; do grep -o "[0-9.]* TFLOP/s = " "$OUT/logs/bwd_${v}_r$r.log" | awk '{printf "%s ", $1}'; echo; done; done
grep -c " ok$" "$OUT"/logs/bwd_*.log | tr '\n' ' '
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
