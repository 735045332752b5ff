#!/usr/bin/env bash
# call 7: row_terms_pairs.patch (bwd_soa: a tile's row terms laid out lse[BR] then δ[BR], so that two adjacent rows'
# lse (and δ) are one 8-byte load: 16 LDS.64 a tile a thread instead of 32 LDS) against the kept build (bwd_kept):
# float64 checks at ragged shapes, three rounds in turn at six shapes.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,5,1024,128 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=16,8,777,64 --shape=2,24,2048,128 --shape=5,9,1024,64"
timeout -s KILL 90 $E/bwd_soa $R > "$OUT/logs/soa_ragged.log" 2>&1
echo "soa ragged rc=$? $(grep -c ' ok$' "$OUT/logs/soa_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/soa_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
S="4,16,4096,128 16,16,1024,128 1,16,16384,128 4,32,4096,64 16,32,1024,64 1,32,16384,64"
for r in 1 2 3; do for sh in $S; do for b in kept soa; do
  timeout -s KILL 40 $E/bwd_$b --shape=$sh > "$OUT/logs/${b}_${sh//,/x}_r$r.log" 2>&1 || echo "$b $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done; done
for sh in $S; do t=${sh//,/x}
  mkdir -p /tmp/cmp_$t; for b in kept soa; do for r in 1 2 3; do cp "$OUT/logs/${b}_${t}_r$r.log" /tmp/cmp_$t/${b}_r$r.log; done; done
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$t kept soa | tee -a "$OUT/summary.txt"
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
