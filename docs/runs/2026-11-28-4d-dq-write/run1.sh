#!/usr/bin/env bash
# 4d dQ-write variants (m0 = HEAD: red.global.add.v4 from registers; m1: no dQ write; m2: st.shared.v4 staging only;
# m3: st.shared.v4 + a per-warp cp.reduce.async.bulk add, correct) and 5b MQA block timelines.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/x.tar.xz  # the binaries named in README.md, built here
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
X=carry/x
# diag_summary.py (carried as carry/x_scripts/) is kept in ../2026-11-28-5b-mqa-stages/
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128"
timeout 120 $X/bench_m3 $R > "$OUT/m3_ragged.log" 2>&1; echo "m3 ragged rc=$? $(grep -c ' ok$' "$OUT/m3_ragged.log") ok, $(grep -c MISMATCH "$OUT/m3_ragged.log") mismatch"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128"
for r in 1 2; do for m in 0 1 2 3; do
  s=$(date +%s); timeout 150 $X/bench_m$m $S > "$OUT/b4_m${m}_r$r.log" 2>&1; echo "m$m r$r rc=$? $(( $(date +%s) - s )) s"
done; done
for m in 0 1 2 3; do echo "== m$m"; for r in 1 2; do grep -E "^  B=" "$OUT/b4_m${m}_r$r.log" | grep -o "[0-9.]* TFLOP/s" | cut -d' ' -f1 > "$OUT/c$r"; done
  paste -d' ' <(grep -E "^  B=" "$OUT/b4_m${m}_r1.log" | awk '{print $1,$2,$3,$4,$5}') "$OUT/c1" "$OUT/c2"; done
rm -f "$OUT"/c1 "$OUT"/c2
cat "$OUT"/b4_m*_r*.log > "$OUT/b4_all.log"; rm -f "$OUT"/b4_m*_r*.log
# 5b
for cfg in "4 plan" "4 1" "4 4" "0 plan"; do set -- $cfg
  if [ "$2" = plan ]; then unset DIAG_PIECES; else export DIAG_PIECES=$2; fi
  DIAG_OUT=/tmp/diag_$1_$2.txt timeout 120 $X/bench5_diag --shape $1 > /tmp/b5_$1_$2.log 2>&1; echo "5b shape $1 pieces $2 rc=$?"
  grep -E "pages of 64|contiguous" /tmp/b5_$1_$2.log | head -4 | cut -c1-200
  python3 carry/x_scripts/diag_summary.py /tmp/diag_$1_$2.txt 2>&1 | tee -a "$OUT/diag_summary.txt" | cut -c1-400
done
unset DIAG_PIECES
timeout 120 $X/bench5 --shape 4 > "$OUT/b5_ref.log" 2>&1; echo "5b ref rc=$?"; grep -E "pages of 64|contiguous" "$OUT/b5_ref.log" | head -4 | cut -c1-200
cat /tmp/b5_*.log > "$OUT/b5_diag_all.log"; xz -9 -c /tmp/diag_4_plan.txt > "$OUT/diag_4_plan.txt.xz"
