#!/bin/bash
# Call 3's builds (sm_90 only), each in /tmp/d/<name> as build1.sh makes them: fix (the decode with each thread's
# shared-memory addresses kept whole, launch bounds (128, 1)) and fixh (fix with the H100's choice forced: four
# stages for groups past one row tile). base is build1.sh's.
set -e
cd /work/main
links() { make -n -B IMPL=reference V=1 build/reference/bin/$1 2>/dev/null | grep -- "-o build/reference/bin/$1\b" | head -1; }
one() {
  V=/tmp/d/$1; shift
  mkdir -p $V/t
  /usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -I. -Xcompiler -fPIC,-Wall,-Wextra -DSOLUTION=1 "$@" -c $V/paged_decode.cu -o $V/pd.o
  for b in bench_task5_paged runner_task5; do
    cmd=$(links $b | sed "s|build/reference/task5_paged/reference/paged_decode.o|$V/pd.o|; s|-o build/reference/bin/$b|-o $V/$b|")
    grep -q "$V/pd.o" <<<"$cmd" || { echo "no paged_decode.o in $b's link"; exit 1; }
    eval "$cmd"; strip $V/$b
  done
  mv $V/runner_task5 $V/t/ && strip -o $V/t/task5_paged build/reference/bin/task5_paged
  echo built $V
}
mkdir -p /tmp/d/fix /tmp/d/fixh
cp task5_paged/reference/paged_decode.cu /tmp/d/fix/
sed 's/dram_bytes_per_second_per_sm() < 30e9/true/' task5_paged/reference/paged_decode.cu > /tmp/d/fixh/paged_decode.cu
one fix & one fixh; wait
