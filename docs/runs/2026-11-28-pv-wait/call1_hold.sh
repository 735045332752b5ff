#!/usr/bin/env bash
# call 1: 4b's forward with P·V's wait kept after the softmax (bench_new: hold_fragments before wgmma_wait<0> in
# persistent_bf16.cuh) against the build before (bench_base), three rounds in turn at issue 31's twelve points
# (bench_task4_bf16 --grid); the bf16 ladder's ragged checks of rungs 10, 10b, 10c and the entry point on the new build.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz
timeout 150 /tmp/x/check_ladder_new 10 10b 10c ref > "$OUT/check_ladder.log" 2>&1; echo "check_ladder rc=$?" | tee -a "$OUT/summary.txt"
tail -2 "$OUT/check_ladder.log" | tee -a "$OUT/summary.txt"
for r in 1 2 3; do for b in base new; do
  timeout 100 /tmp/x/bench_$b --grid > "$OUT/${b}_r$r.log" 2>&1
  echo "== $b round $r rc=$?" >> "$OUT/summary.txt"
  awk '/^B=/{sh=$1" "$2" "$3" "$4" "($5=="causal"?"c":"n")} /TFLOP\/s =/{for(i=1;i<=NF;i++) if($i=="TFLOP/s" && $(i+1)=="=") v=$(i-1); ok=$NF; printf "%s %s %s\n", sh, v, ok}' "$OUT/${b}_r$r.log" >> "$OUT/summary.txt"
done; done
cat "$OUT/summary.txt"
