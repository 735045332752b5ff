#!/bin/bash
# builds /tmp/d/pf/bench_pf{1,2} (sm_90): the reference with DIAG_PF = 1, 2 (an L2 prefetch of the tile that many beyond the cp.async pipeline)
set -e
cd /work/main
cmd=$(make -n -B IMPL=reference V=1 build/reference/bin/bench_task5_paged 2>/dev/null | grep -- "-o build/reference/bin/bench_task5_paged\b" | head -1)
for d in 1 2; do
  /usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -I. -Xcompiler -fPIC,-Wall,-Wextra -DSOLUTION=1 -DDIAG_PF=$d -c /tmp/d/pf/paged_decode.cu -o /tmp/d/pf/pd$d.o
  c=$(sed "s|build/reference/task5_paged/reference/paged_decode.o|/tmp/d/pf/pd$d.o|; s|-o build/reference/bin/bench_task5_paged|-o /tmp/d/pf/bench_pf$d|" <<<"$cmd")
  eval "$c" && strip /tmp/d/pf/bench_pf$d && echo built pf$d
done
