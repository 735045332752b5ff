#!/bin/bash
# builds, for each variant folder V (/tmp/d/q, /tmp/d/w8): V/bench_task5_paged, V/t/task5_paged, V/t/runner_task5 (sm_90 only)
set -e
cd /work/main
links() { make -n -B IMPL=reference V=1 build/reference/bin/$1 2>/dev/null | grep -- "-o build/reference/bin/$1\b" | head -1; }
make IMPL=reference build/reference/bin/task5_paged build/reference/bin/runner_task5 >/dev/null
one() {
  V=$1
  /usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -I. -Xcompiler -fPIC,-Wall,-Wextra -DSOLUTION=1 -c $V/paged_decode.cu -o $V/pd.o
  mkdir -p $V/t
  for b in bench_task5_paged runner_task5; do
    cmd=$(links $b | sed "s|build/reference/task5_paged/reference/paged_decode.o|$V/pd.o|; s|-o build/reference/bin/$b|-o $V/$b|")
    grep -q "$V/pd.o" <<<"$cmd" || { echo "no paged_decode.o in $b's link"; exit 1; }
    eval "$cmd"; strip $V/$b
  done
  mv $V/runner_task5 $V/t/ && strip -o $V/t/task5_paged build/reference/bin/task5_paged
  echo built $V
}
one /tmp/d/q & one /tmp/d/w8; wait
