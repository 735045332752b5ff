#!/bin/bash
# builds bench_h0 … bench_h4: 5b's decode with DIAG_HINT = 0 … 4, linked with the reference build's other objects
set -e
cd /work/main
objs=$(make -n -B IMPL=reference V=1 build/reference/bin/bench_task5_paged 2>/dev/null | grep -- "-o build/reference/bin/bench_task5_paged" | tr ' ' '\n' | grep '\.o$' | grep -v paged_decode.o)
for h in 0 1 2 3 4; do
  /usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -I. -Xcompiler -fPIC,-Wall,-Wextra -DSOLUTION=1 -DDIAG_HINT=$h -c /tmp/hint/paged_decode.cu -o /tmp/hint/pd_h$h.o
  g++ $objs /tmp/hint/pd_h$h.o -o /tmp/hint/bench_h$h -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart -lpcre2-8 -lpthread
  strip /tmp/hint/bench_h$h
  echo built h$h
done
