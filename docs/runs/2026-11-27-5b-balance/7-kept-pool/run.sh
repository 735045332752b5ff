#!/usr/bin/env bash
# the second speed against cudaFree: the benchmark's buffers from cudaMalloc/cudaFree (order2) or from a stream-ordered pool that keeps freed memory (pool); the same shapes in turn
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C /tmp -xJf carry/s8.tar.xz
for r in 1 2; do for v in order2 pool; do
  ORDER_DIAG=1 timeout 70 /tmp/v8/$v > "$OUT/${v}_$r.log" 2>&1; echo "$v $r rc=$?"
  grep -E "^B=" "$OUT/${v}_$r.log" | sed 's/  */ /g; s/ of a copy of the same bytes.*//' | cut -c1-100
done; done
