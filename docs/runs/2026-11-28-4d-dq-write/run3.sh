#!/usr/bin/env bash
# round 3: 4d m9 (dQ staged in shared memory by every warp, one 32 KB bulk add a tile by thread 0, double-buffered,
# two Q/dO stages; BR = 80 keeps the reds) against m0 (HEAD) and m2 (staging only); 5b MQA 3 vs 4 stages.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/x.tar.xz  # the binaries named in README.md, built here
X=carry/x
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=1,1,64,64 --shape=1,1,257,64"
timeout 120 $X/bench_m9 $R > "$OUT/ragged.log" 2>&1; echo "m9 ragged rc=$? $(grep -c ' ok$' "$OUT/ragged.log") ok, $(grep -c MISMATCH "$OUT/ragged.log") mismatch"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
V="0 9 2"
for r in 1 2 3; do for m in $V; do
  timeout 150 $X/bench_m$m $S > "/tmp/b4_m${m}_r$r.log" 2>&1 || echo "m$m r$r rc=$?"
done; done
for m in $V; do echo "== m$m"; for r in 1 2 3; do grep -E "^  B=" "/tmp/b4_m${m}_r$r.log" | grep -o "[0-9.]* TFLOP/s" | cut -d' ' -f1 > /tmp/c$r; done
  paste -d' ' <(grep -E "^  B=" "/tmp/b4_m${m}_r1.log" | awk '{print $1,$2,$3,$4,$5}' | sed 's/ [0-9]*\.[0-9]*$//') /tmp/c1 /tmp/c2 /tmp/c3; done | tee "$OUT/b4_table.txt"
for m in $V; do for r in 1 2 3; do echo "### m$m r$r"; cat /tmp/b4_m${m}_r$r.log; done; done > "$OUT/b4_all.log"
for r in 1 2; do for st in 3 4; do
  DIAG_STAGES=$st timeout 120 $X/bench5_diag --shape 4 > /tmp/b5_s${st}_r$r.log 2>&1; echo "5b MQA stages $st r$r rc=$?"
  grep -E "pages of 64|contiguous" /tmp/b5_s${st}_r$r.log | head -2 | cut -c1-110
done; done
cat /tmp/b5_*.log > "$OUT/b5_all.log"
