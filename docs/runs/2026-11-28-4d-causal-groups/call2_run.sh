#!/usr/bin/env bash
# 4d causal: the head group's size (DIAG_GROUP_MB: Q and dO of the group's heads) at the six causal shapes
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
D=carry/d
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=1,32,16384,64 --shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
for r in 1 2; do
  for v in "g16 DIAG_GROUP_MB=16" "g1 DIAG_GROUP_MB=1" "g2 DIAG_GROUP_MB=2" "g4 DIAG_GROUP_MB=4" "g8 DIAG_GROUP_MB=8" "natural DIAG_ORDER=2"; do
    set -- $v; name=$1; shift
    s=$(date +%s.%N)
    env "$@" timeout -s KILL 60 $D/bench_diag $S > "$OUT/logs/${name}_r$r.log" 2>&1 || echo "$name r$r rc=$?"
    echo "$name r$r $(echo "$(date +%s.%N) - $s" | bc) s"
  done
done
env DIAG_GROUP_MB=4 DIAG_TL=$OUT/logs/tl_g4.txt timeout -s KILL 60 $D/bench_diag --shape=16,32,1024,64 > /dev/null 2>&1
env DIAG_TL=$OUT/logs/tl_base4k.txt timeout -s KILL 60 $D/bench_diag --shape=4,32,4096,64 > /dev/null 2>&1
for f in "$OUT"/logs/*.log; do echo "== $(basename $f)"; grep -E "^  B=" "$f" | grep causal | cut -c1-100; done > "$OUT/summary.txt" 2>&1
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
