#!/usr/bin/env bash
# 5b MQA: two row groups a block with 3–6 stages (DIAG_ST), pieces 1/2/plan; one row group (old) beside
set -uo pipefail
OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT"
mkdir -p carry/dg && tar -C carry/dg -xJf carry/dg.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
one() {  # label, shape, env...
  local label=$1 sh=$2; shift 2
  env "$@" timeout 60 carry/dg/bench_task5_paged --shape $sh > /tmp/o.log 2>&1; local rc=$?
  echo "shape $sh $label rc=$rc: $(grep -E '^B=' /tmp/o.log | head -2 | sed 's/  */ /g; s/of a copy of the same bytes//; s/B=64 H_q=32 H_kv=1 L=4096 (MQA)//' | cut -c1-60 | tr '\n' '|') $(grep -o 'worst error [0-9.]*' /tmp/o.log | tr '\n' ' ')" | tee -a "$OUT/dg2.log"
}
for r in 1 2; do
  for v in "rg1:DIAG_RG1=1" "st3:DIAG_ST=3" "st4:DIAG_ST=4" "st5:DIAG_ST=5" "st6:DIAG_ST=6" "st4p1:DIAG_ST=4 DIAG_PIECES=1" "st6p1:DIAG_ST=6 DIAG_PIECES=1" "st6p2:DIAG_ST=6 DIAG_PIECES=2" "st4p4:DIAG_ST=4 DIAG_PIECES=4"; do
    one "${v%%:*}_r$r" 4 ${v#*:}
  done
done
