#!/bin/bash
# builds /tmp/d/out/bench_L{0..4} (sm_90): paged_decode.cu at DIAG_LEVEL=n, linked into the diagnostic bench (DIAG_NOCHECK)
set -e
cd /work/main
mkdir -p /tmp/d/out
g++ -O2 -g -std=c++17 -fPIC -Wall -Wextra -I. -I/usr/local/cuda/include -DATTNLAB_ROOT='"/work/main"' -c /tmp/d/bench_task5_paged.cpp -o /tmp/d/bench.o
cmd=$(make -n -B IMPL=reference V=1 build/reference/bin/bench_task5_paged 2>/dev/null | grep -- "-o build/reference/bin/bench_task5_paged\b" | head -1)
build() {
  /usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -I. -Xcompiler -fPIC,-Wall,-Wextra -DSOLUTION=1 -DDIAG_LEVEL=$1 -c /tmp/d/paged_decode.cu -o /tmp/d/pd$1.o
  c=$(sed "s|build/reference/task5_paged/reference/paged_decode.o|/tmp/d/pd$1.o|; s|build/common/task5_paged/bench_task5_paged.o|/tmp/d/bench.o|; s|-o build/reference/bin/bench_task5_paged|-o /tmp/d/out/bench_L$1|" <<<"$cmd")
  grep -q "/tmp/d/pd$1.o" <<<"$c" && grep -q /tmp/d/bench.o <<<"$c" || { echo "link line not rewritten"; exit 1; }
  eval "$c" && strip /tmp/d/out/bench_L$1 && echo built L$1
}
build 0 & build 1; wait
build 2 & build 3; wait
build 4
