#!/usr/bin/env bash
# call 4: mbar_hint_diag.patch (-DDIAG_MBAR_HINT=0x989680: mbar_wait as a PTX loop around try_wait with a 10 ms suspend-time
# hint, so that a waiting warp sleeps until the phase completes instead of polling from a compiler-made loop with YIELD),
# linked into bench_task4_bf16 and bench_task4_bf16_backward (hint_*), against the kept build (kept_*, eea467c's):
# three rounds in turn; every timed call is checked by the benchmark.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
for r in 1 2 3; do
  for sh in 1,16,16384,128 4,16,4096,128 16,16,1024,128 1,32,16384,64 4,32,4096,64; do for b in kept hint; do
    timeout -s KILL 40 $E/${b}_bench_task4_bf16 --shape=$sh > "$OUT/logs/${b}_f${sh//,/x}_r$r.log" 2>&1 || echo "$b fwd $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
  done; done
  for sh in 4,16,4096,128 16,16,1024,128 16,32,1024,64; do for b in kept hint; do
    timeout -s KILL 40 $E/${b}_bench_task4_bf16_backward --shape=$sh > "$OUT/logs/${b}_b${sh//,/x}_r$r.log" 2>&1 || echo "$b bwd $sh r$r rc=$?" | tee -a "$OUT/summary.txt"
  done; done
done
echo "mismatches: $(grep -l MISMATCH "$OUT"/logs/*.log | wc -l) logs; ok lines: $(grep -h ' ok$' "$OUT"/logs/*.log | wc -l)" | tee -a "$OUT/summary.txt"
for f in "$OUT"/logs/*_r1.log; do t=$(basename $f _r1.log); t=${t#*_}; echo $t; done | sort -u > /tmp/tags
while read t; do mkdir -p /tmp/cmp_$t; for b in kept hint; do for r in 1 2 3; do cp "$OUT/logs/${b}_${t}_r$r.log" /tmp/cmp_$t/${b}_r$r.log; done; done
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$t kept hint | tee -a "$OUT/summary.txt"; done < /tmp/tags
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
