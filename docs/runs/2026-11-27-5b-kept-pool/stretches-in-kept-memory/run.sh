#!/usr/bin/env bash
# 5b in kept memory: the reference against the stretches plan (docs/runs/2026-11-27-5b-balance/1-stretches), 1 and 2
# stretches a block slot (ATTNLAB_WAVES), the full benchmark in turn, three rounds
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
for r in 1 2 3; do
  timeout 100 ./carry/k5/bench_ref > "$OUT/ref_$r.log" 2>&1; echo "ref $r rc=$?"
  ATTNLAB_WAVES=1 timeout 100 ./carry/k5/bench_stretch > "$OUT/st1_$r.log" 2>&1; echo "st1 $r rc=$?"
  ATTNLAB_WAVES=2 timeout 100 ./carry/k5/bench_stretch > "$OUT/st2_$r.log" 2>&1; echo "st2 $r rc=$?"
done
for v in ref st1 st2; do for r in 1 2 3; do echo "== $v $r"; grep -E "^B=" "$OUT/${v}_$r.log" | head -15 | sed 's/  */ /g; s/ of a copy of the same bytes.*//' | cut -c1-100; done; done
