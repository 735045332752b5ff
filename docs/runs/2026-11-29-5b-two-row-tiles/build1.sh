#!/bin/bash
# Call 1's builds (sm_90 only), each in /tmp/d/<name>: bench_task5_paged, and t/ (runner_task5 beside the 5b test
# program) for the variants whose tests run. base: the decode as committed before this change (/tmp/pd_base.cu);
# new: this change with no DIAG macro (one row tile a block everywhere); rt3: MQA on blocks of two row tiles, 3 stages,
# two blocks an SM (128 registers, the query's fragments from shared memory); rt4q / rt6q: two row tiles, 4 / 6 stages,
# one block an SM, the query's fragments in registers.
set -e
cd /work/main
links() { make -n -B IMPL=reference V=1 build/reference/bin/$1 2>/dev/null | grep -- "-o build/reference/bin/$1\b" | head -1; }
make IMPL=reference build/reference/bin/task5_paged build/reference/bin/runner_task5 build/reference/bin/bench_task5_paged >/dev/null
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
for v in base new rt3 rt4q rt6q; do mkdir -p /tmp/d/$v; cp task5_paged/reference/paged_decode.cu /tmp/d/$v/; done
cp /tmp/pd_base.cu /tmp/d/base/paged_decode.cu
one base & one new; wait
one rt3 -DDIAG_RT2=3 & one rt4q -DDIAG_RT2=4 -DDIAG_QREG=1 -DDIAG_MINB=0; wait
one rt6q -DDIAG_RT2=6 -DDIAG_QREG=1 -DDIAG_MINB=0
