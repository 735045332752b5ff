#!/usr/bin/env bash
# call 5: the next key block asked for at a block's start but first used after its first tile (thread 0 had waited for
# the atomic's answer at the start). Builds (all -DDIAG_PERSIST), each run with DIAG_PERSIST=3:
#   bwd_noshfl (q3, call 4), bwd_noshfl2 (r3: q3 with the atomic's answer used late), bwd_new2 (s3: the same with the
#   broadcasts of call 3)
# (call 4's header follows for the builds it names)
#   bwd_new     call 3's build (the block's stage and buffer broadcast by __shfl_sync, so that ptxas keeps their
#               addresses in uniform registers), run as p0 (nothing persistent) and p3 (persistent at D = 64 and at
#               D = 128 with 64-row tiles)
#   bwd_noshfl  the same without the broadcasts (call 1's kernel), run as q3
#   c16         bwd_new with DIAG_PERSIST=16: nothing persistent, but the D = 64 kernel launched with the persistent
#               kernel's shared memory (195 KB instead of 161): does the smaller L1 cost the steady state?
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
R="--shape=1,3,1,64 --shape=2,3,127,128 --shape=2,3,129,64 --shape=1,2,81,128 --shape=3,5,1024,128 --shape=40,4,300,64 --shape=8,24,1000,128 --shape=16,8,777,64"
run() {
  case $1 in
    base) timeout -s KILL 60 $E/bwd_base "${@:2}" ;;
    p0) DIAG_PERSIST=0 timeout -s KILL 60 $E/bwd_new "${@:2}" ;;
    p3) DIAG_PERSIST=3 timeout -s KILL 60 $E/bwd_new "${@:2}" ;;
    q3) DIAG_PERSIST=3 timeout -s KILL 60 $E/bwd_noshfl "${@:2}" ;;
    c16) DIAG_PERSIST=16 timeout -s KILL 60 $E/bwd_new "${@:2}" ;;
    r3) DIAG_PERSIST=3 timeout -s KILL 60 $E/bwd_noshfl2 "${@:2}" ;;
    s3) DIAG_PERSIST=3 timeout -s KILL 60 $E/bwd_new2 "${@:2}" ;;
  esac
}
for b in r3 s3; do
  run $b $R > "$OUT/logs/${b}_ragged.log" 2>&1
  echo "$b ragged rc=$? $(grep -c ' ok$' "$OUT/logs/${b}_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/${b}_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
done
for r in 1 2 3; do for b in base q3 r3 s3; do
  run $b $S > "$OUT/logs/${b}_r$r.log" 2>&1 || echo "$b r$r rc=$?" | tee -a "$OUT/summary.txt"
done; done
python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py "$OUT/logs" base q3 r3 s3 | tee -a "$OUT/summary.txt"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
