#!/usr/bin/env bash
# call 3 (as call1_persistent.sh without p9): 4d's key-tile kernel made persistent (a diagnostic build, -DDIAG_PERSIST: DIAG_PERSIST picks where), against
# the build before (bwd_base). Each setting checked in float64 at 13 ragged shapes, then three rounds in turn at issue
# 31's six shapes, causal and not:
#   p0  the new code, nothing persistent (the kernel as before, fed by the new producer code)
#   p3  persistent at D = 64, and at D = 128 where 64-row tiles run (causal, Sq < 2,048; two stages)
#   p5  persistent at D = 64, and at D = 128 with 64-row tiles wherever Sq < 2,048
#   p9  persistent at D = 64, and at D = 128 with 64-row tiles everywhere
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=1,2,1000,128 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=3,5,1024,128 --shape=1,3,383,64 --shape=2,2,4100,128 --shape=40,4,300,64 --shape=2,24,2048,128 --shape=3,7,640,64 --shape=8,24,1000,128 --shape=16,8,777,64"
run() {  # build setting args…
  local b=$1 s=$2; shift 2
  if [ "$b" = base ]; then timeout -s KILL 60 $E/bwd_base "$@"; else DIAG_PERSIST=$s timeout -s KILL 60 $E/bwd_new "$@"; fi
}
for s in 0 3 5; do
  run new $s $R > "$OUT/logs/p${s}_ragged.log" 2>&1
  echo "p$s ragged rc=$? $(grep -c ' ok$' "$OUT/logs/p${s}_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/p${s}_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
done
for r in 1 2 3; do for b in base p0 p3 p5; do
  run ${b%%[0-9]*} ${b#p} $S > "$OUT/logs/${b}_r$r.log" 2>&1 || echo "$b r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" base p0 p3 p5 | tee -a "$OUT/summary.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
