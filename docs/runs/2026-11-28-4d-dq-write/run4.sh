#!/usr/bin/env bash
# round 6: 4d with a producer warpgroup (warp 0: TMA loads on empty/full mbarriers; warp 1: dQ's bulk add of each
# tile, staged by the MMA warps; setmaxnreg 32 / 240; BR = 80: two Q/dO stages) against m0 (HEAD), three rounds
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/x.tar.xz  # bench_m0 (the kept build) and bench_p (producer_warpgroup.patch), built here
X=carry/x
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=1,1,64,64 --shape=1,1,257,64 --shape=1,2,2500,128"
timeout -s KILL 60 $X/bench_p $R > "$OUT/p_ragged.log" 2>&1; echo "p ragged rc=$? $(grep -c ' ok$' "$OUT/p_ragged.log") ok, $(grep -c MISMATCH "$OUT/p_ragged.log") mismatch"
grep -E "MISMATCH|rror" "$OUT/p_ragged.log" | head -5 | cut -c1-200
grep -q " ok$" "$OUT/p_ragged.log" || exit 1
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
V="0 p"
for r in 1 2; do for m in $V; do
  timeout -s KILL 40 $X/bench_$([ $m = p ] && echo p || echo m0) $S > "/tmp/b4_m${m}_r$r.log" 2>&1 || echo "m$m r$r rc=$?"
done; done
for m in $V; do echo "== $m"; for r in 1 2; do grep -E "^  B=" "/tmp/b4_m${m}_r$r.log" | grep -o "[0-9.]* TFLOP/s" | cut -d' ' -f1 > /tmp/c$r; done
  paste -d' ' <(grep -E "^  B=" "/tmp/b4_m${m}_r1.log" | awk '{print $1,$2,$3,$4,$5}' | sed 's/ [0-9]*\.[0-9]*$//') /tmp/c1 /tmp/c2; done | tee "$OUT/b4_table.txt"
for m in $V; do for r in 1 2; do echo "### $m r$r"; cat /tmp/b4_m${m}_r$r.log; done; done > "$OUT/b4_all.log"
grep -c MISMATCH "$OUT/b4_all.log"
