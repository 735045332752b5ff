#!/usr/bin/env bash
# call 5: the D = 128 forward with the warpgroup and warp indices broadcast from lane 0 (-DDIAG_UNIFORM_ALL_D: wgmma
# descriptors in uniform registers, 40 R2UR in the kernel instead of 96) against the kept build, three rounds in turn.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd carry/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
SH="--shape=16,16,1024,128 --shape=4,16,4096,128 --shape=1,16,16384,128"
for r in 1 2 3; do for b in base u; do
  ./bench_$b $SH > "$OUT/${b}_r$r.log" 2>&1
  echo "== $b round $r"; awk '/^B=/{sh=$1" "$2" "$3" "$4" "($5=="causal"?"c":"n")} /TFLOP\/s =/{for(i=1;i<=NF;i++) if($i=="TFLOP/s" && $(i+1)=="=") v=$(i-1); ok=$NF; printf "%s %s %s\n", sh, v, ok}' "$OUT/${b}_r$r.log"
done; done
