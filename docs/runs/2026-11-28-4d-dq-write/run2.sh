#!/usr/bin/env bash
# round 2: 4d m0 (HEAD), m2 (staging only, wrong dQ), m5 (non-causal walks staggered), m6 (staging + per-warp bulk
# reduce, double-buffered at D = 64 and BR = 64, two Q/dO stages), m8 (half the reds after dK's wait); 5b MQA stages.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/x.tar.xz  # the binaries named in README.md, built here
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
X=carry/x
# diag_summary.py (carried as carry/x_scripts/) is kept in ../2026-11-28-5b-mqa-stages/
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128"
for m in 5 6 8; do timeout 120 $X/bench_m$m $R > "$OUT/m${m}_ragged.log" 2>&1; echo "m$m ragged rc=$? $(grep -c ' ok$' "$OUT/m${m}_ragged.log") ok, $(grep -c MISMATCH "$OUT/m${m}_ragged.log") mismatch"; done
cat "$OUT"/m*_ragged.log > "$OUT/ragged.log"; rm -f "$OUT"/m*_ragged.log
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128"
V="0 2 5 6 8"
for r in 1 2; do for m in $V; do
  timeout 150 $X/bench_m$m $S > "/tmp/b4_m${m}_r$r.log" 2>&1 || echo "m$m r$r rc=$?"
done; done
for m in $V; do echo "== m$m"; for r in 1 2; do grep -E "^  B=" "/tmp/b4_m${m}_r$r.log" | grep -o "[0-9.]* TFLOP/s" | cut -d' ' -f1 > /tmp/c$r; done
  paste -d' ' <(grep -E "^  B=" "/tmp/b4_m${m}_r1.log" | awk '{print $1,$2,$3,$4,$5}') /tmp/c1 /tmp/c2 | sed 's/ D=[0-9]* 0.[0-9]* / /'; done | tee "$OUT/b4_table.txt"
for m in $V; do for r in 1 2; do echo "### m$m r$r"; cat /tmp/b4_m${m}_r$r.log; done; done > "$OUT/b4_all.log"
for cfg in "3 1" "4 1" "6 1" "6 plan"; do set -- $cfg
  export DIAG_STAGES=$1; if [ "$2" = plan ]; then unset DIAG_PIECES; else export DIAG_PIECES=$2; fi
  DIAG_OUT=/tmp/diag_s$1_$2.txt timeout 120 $X/bench5_diag --shape 4 > /tmp/b5_s$1_$2.log 2>&1; echo "5b MQA stages $1 pieces $2 rc=$?"
  grep -E "pages of 64|contiguous" /tmp/b5_s$1_$2.log | head -2 | cut -c1-150
  python3 carry/x_scripts/diag_summary.py /tmp/diag_s$1_$2.txt > /tmp/sum.txt 2>&1; cat /tmp/sum.txt >> "$OUT/diag_summary.txt"; sed -n 3,7p /tmp/sum.txt
done
cat /tmp/b5_*.log > "$OUT/b5_all.log"
