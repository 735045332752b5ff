#!/usr/bin/env bash
# call 2: (a) where the old persistent kernel's extra instructions run (ncu SourceCounters, oldP against newP at
# 4·32·4096·64); (b) the compact persistent kernel at 16,384 rows (D = 64); (c) persistent at D = 128 with 64-row tiles
# and two stages (bwd_new2: the kept candidate's kernel plus DIAG_PERSIST_D128: 1 persistent where 64-row tiles run
# (causal below 2,048 rows), 2 64-row tiles persistent everywhere, 3 64-row tiles not persistent), float64 checks first.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,2,81,128 --shape=2,3,127,128 --shape=2,3,129,128 --shape=1,2,1000,128 --shape=3,5,1024,128 --shape=2,2,4100,128 --shape=8,24,1000,128 --shape=2,24,2048,128 --shape=1,3,1,128 --shape=5,9,1024,64"
for m in 1 2; do
  DIAG_PERSIST_D128=$m timeout -s KILL 90 $E/bwd_new2 $R > "$OUT/logs/d128_$m.ragged.log" 2>&1
  echo "d128=$m ragged rc=$? $(grep -c ' ok$' "$OUT/logs/d128_$m.ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/d128_$m.ragged.log") mismatch" | tee -a "$OUT/summary.txt"
done
run() {  # name binary envassign shape round
  env $3 timeout -s KILL 40 $E/bwd_$2 --shape=$4 > "$OUT/logs/$1_${4//,/x}_r$5.log" 2>&1 || echo "$1 $4 r$5 rc=$?" | tee -a "$OUT/summary.txt"
}
for r in 1 2 3; do
  run n0 new2 DIAG_PERSIST_D128=0 16,16,1024,128 $r; run p1 new2 DIAG_PERSIST_D128=1 16,16,1024,128 $r
  run p2 new2 DIAG_PERSIST_D128=2 16,16,1024,128 $r; run n3 new2 DIAG_PERSIST_D128=3 16,16,1024,128 $r
  run n0 new2 DIAG_PERSIST_D128=0 4,16,4096,128 $r; run p2 new2 DIAG_PERSIST_D128=2 4,16,4096,128 $r; run n3 new2 DIAG_PERSIST_D128=3 4,16,4096,128 $r
  run n0 new2 DIAG_PERSIST_MAX_SQ=0 1,32,16384,64 $r; run p0 new2 DIAG_PERSIST_MAX_SQ=1000000 1,32,16384,64 $r
done
for sh in 16x16x1024x128 4x16x4096x128 1x32x16384x64; do
  mkdir -p /tmp/cmp_$sh; for f in "$OUT"/logs/*_${sh}_r*.log; do b=$(basename $f); cp $f /tmp/cmp_$sh/${b/_${sh}/}; done
  echo "== $sh" | tee -a "$OUT/summary.txt"
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$sh n0 p0 p1 p2 n3 | tee -a "$OUT/summary.txt"
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for c in "oldP old" "newP new"; do set -- $c
  DIAG_PERSIST_MAX_SQ=1000000 timeout 100 $NCU --section SourceCounters --section InstructionStats -k regex:key_tile --launch-skip 3 --launch-count 1 \
    -o /tmp/ncu_$1 $E/bwd_$2 --shape=4,32,4096,64 > "$OUT/logs/ncu_$1.log" 2>&1; echo "ncu $1 exit $?" | tee -a "$OUT/summary.txt"
  $NCU -i /tmp/ncu_$1.ncu-rep --page source --csv --print-source sass > "$OUT/ncu_$1_sass.csv" 2> "$OUT/logs/ncu_$1_source.err"
  echo "ncu $1 source page: $(wc -l < "$OUT/ncu_$1_sass.csv") lines" | tee -a "$OUT/summary.txt"
  $NCU -i /tmp/ncu_$1.ncu-rep --page details > "$OUT/logs/ncu_$1_details.txt" 2>&1
done
xz -9 "$OUT"/ncu_*_sass.csv
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
