#!/usr/bin/env bash
# 5b with two row groups a block where g > 16 (MQA): against one row group (DIAG_RG1), and the split forced (DIAG_PIECES)
set -uo pipefail
OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT"
mkdir -p carry/dg && tar -C carry/dg -xJf carry/dg.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
one() {  # label, env..., shape
  local label=$1 sh=$2; shift 2
  env "$@" timeout 60 carry/dg/bench_task5_paged --shape $sh > /tmp/o.log 2>&1; local rc=$?
  echo "shape $sh $label rc=$rc: $(grep -E '^B=' /tmp/o.log | head -2 | sed 's/  */ /g; s/of a copy of the same bytes//' | cut -c1-100 | tr '\n' '|') $(grep -ciE 'fail|error|mismatch' /tmp/o.log)" | tee -a "$OUT/dg.log"
  cp /tmp/o.log "$OUT/shape${sh}_${label}.log"
}
for r in 1 2; do
  for v in "rg2:X=1" "rg2p1:DIAG_PIECES=1" "rg2p2:DIAG_PIECES=2" "rg2p4:DIAG_PIECES=4" "rg2p8:DIAG_PIECES=8" "rg1:DIAG_RG1=1" "rg1p1:DIAG_RG1=1 DIAG_PIECES=1"; do
    one "${v%%:*}_r$r" 4 ${v#*:}
  done
done
for sh in 0 1 2 3 5 6; do one plan $sh X=1; done
export PYTHONUNBUFFERED=1 ATTNLAB_LIB=$PWD/carry/bwd-python/libattnlab.so
(cd tools/vs_torch && timeout 200 python3 paged_decode.py > "$OUT/paged_decode.log" 2>&1); echo "paged_decode.py: exit $?"
grep -E "^B=|cuDNN|FA2|attnlab" "$OUT/paged_decode.log" | grep -v "Warning\|return\|^attnlab:\|^FA4:" | sed 's/max |err|.*//; s/  */ /g' | head -60
