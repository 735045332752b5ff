#!/usr/bin/env bash
# the ragged batch's two speeds against the process's memory: a pad allocated and written first (kept, or freed), then contiguous, pages of 64, contiguous
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C /tmp -xJf carry/s7.tar.xz
for v in "pad0:PAD_GB=0" "pad20kept:PAD_GB=20" "pad20freed:PAD_GB=20 PAD_FREE=1" "pad2kept:PAD_GB=2" "pad0b:PAD_GB=0"; do
  env ORDER_DIAG=1 ${v#*:} timeout 60 /tmp/v7/order > "$OUT/${v%%:*}.log" 2>&1; echo "${v%%:*} rc=$?"
  grep -E "^B=" "$OUT/${v%%:*}.log" | sed 's/  */ /g' | cut -c40-110
done
