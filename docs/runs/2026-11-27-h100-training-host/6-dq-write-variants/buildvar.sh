#!/usr/bin/env bash
# buildvar.sh NAME "FLAGS": bench_task4_bf16_backward with the sm90 backward compiled with FLAGS -> build/var/NAME
set -e
cd /work/main
n=$1; f=$2
/usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a -I. -Xcompiler -fPIC -DATTNLAB_SM90A=1 -DSOLUTION=1 $f -c task4_bf16_backward/reference/flash_attention_bf16_backward_sm90.cu -o build/var/$n.o
objs=$(make -n IMPL=reference -W task4_bf16_backward/bench_task4_bf16_backward.cpp build/reference/bin/bench_task4_bf16_backward 2>/dev/null | grep -o 'g++ build/common/task4_bf16_backward/bench.*-o build' | sed 's/^g++ //; s/ -o build$//')
objs=${objs/build\/reference\/task4_bf16_backward\/reference\/flash_attention_bf16_backward_sm90.o/build\/var\/$n.o}
g++ $objs -o build/var/$n -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart -lpcre2-8 -lpthread
echo built build/var/$n
