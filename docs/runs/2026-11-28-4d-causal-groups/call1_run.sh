#!/usr/bin/env bash
# 4d causal diagnostics: block timelines, block order, head-group size, mask pass off
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
D=carry/d
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv > "$OUT/logs/gpu.txt"
S="--shape=16,32,1024,64 --shape=4,32,4096,64 --shape=16,16,1024,128"
run() {  # name env...
  local name=$1; shift
  env "$@" timeout -s KILL 60 $D/bench_diag $S > "$OUT/logs/$name.log" 2>&1 || echo "$name rc=$?"
}
for r in 1 2; do
  timeout -s KILL 60 $D/bench_ref $S > "$OUT/logs/ref_r$r.log" 2>&1 || echo "ref rc=$?"
  run base_r$r DIAG_ORDER=0
  run spt_r$r DIAG_ORDER=1
  run natural_r$r DIAG_ORDER=2
  run g4_r$r DIAG_GROUP_MB=4
  run g8_r$r DIAG_GROUP_MB=8
  run g32_r$r DIAG_GROUP_MB=32
  run nomask_r$r DIAG_NOMASK=1
done
# timelines: the last call of each shape (one shape a process)
for c in 0; do
  for v in "base DIAG_ORDER=0" "nomask DIAG_NOMASK=1" "natural DIAG_ORDER=2" "g8 DIAG_GROUP_MB=8"; do
    set -- $v; name=$1; shift
    env "$@" DIAG_TL=$OUT/logs/tl_${name}.txt timeout -s KILL 60 $D/bench_diag --shape=16,32,1024,64 > /dev/null 2>&1
  done
done
for f in "$OUT"/logs/*.log; do echo "== $(basename $f)"; grep -E "^  B=" "$f" | cut -c1-110; done > "$OUT/summary.txt" 2>&1
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
