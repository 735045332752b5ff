#!/bin/bash
# Call 1: flush modes and strided pieces (docs/runs/2026-11-28-5b-flush-and-order/README.md)
R=$PWD
tar -C /tmp -xJf carry/d1.tar.xz
cp /tmp/d/vs/event_timing.py tools/vs_torch/event_timing.py   # the diagnostic DIAG_FLUSH (this machine's copy only)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/gpu.txt
/tmp/d/read_patterns > $OUT/patterns.log 2>&1
for st in 0 1; do for f in write read; do
  DIAG_NO_F32=1 DIAG_FLUSH=$f DIAG_STRIDED=$st timeout 100 /tmp/d/bench5_diag > $OUT/bench_${f}_s${st}.log 2>&1
done; done
for f in write read; do
  DIAG_FLUSH=$f ATTNLAB_LIB=/tmp/d/pylib/libattnlab.so timeout 150 python3 tools/vs_torch/paged_decode.py > $OUT/torch_${f}.log 2>&1
done
