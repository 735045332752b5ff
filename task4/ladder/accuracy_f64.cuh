// accuracy_f64.cuh — how far a Task-4 kernel's output is from attention computed in float64 on the same fp32
// inputs (course staff's ladder benchmark: task4/ladder/bench_ladder.cpp). Plain and slow on purpose: a block per
// query row, scores, softmax and P·V in double, then the block's share of Σ(got − want)², Σ want² and max |got − want|.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "task4/ladder/ladder.h"

namespace task4_ladder {
namespace f64 {

constexpr int kThreads = 128;

__device__ __forceinline__ double warp_sum(double x) {
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}
__device__ __forceinline__ double warp_max(double x) {
    for (int off = 16; off > 0; off >>= 1) x = fmax(x, __shfl_xor_sync(0xffffffffu, x, off));
    return x;
}

// blockIdx.y: head h0 + y; blockIdx.x: the x-th checked row, x·stride + x mod stride. acc: Σ diff², Σ want², then
// max |diff| as the bits of a non-negative double (their order is the numbers'), summed with atomics.
__global__ void __launch_bounds__(kThreads) error_kernel(const float* q, const float* k, const float* v, const float* o, int Sq,
                                                         int Sk, int D, bool causal, int h0, int stride, double* acc) {
    extern __shared__ double sh[];
    double* qs = sh;          // [D]
    double* s = sh + D;       // [Sk]
    double* red = s + Sk;     // [kThreads / 32]
    const int row = int(blockIdx.x) * stride + int(blockIdx.x) % stride;
    if (row >= Sq) return;
    const size_t bh = size_t(h0) + blockIdx.y;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const float* kh = k + bh * Sk * D;
    const float* vh = v + bh * Sk * D;
    for (int d = tid; d < D; d += kThreads) qs[d] = q[(bh * Sq + row) * D + d];
    __syncthreads();
    const int last = causal ? row + Sk - Sq : Sk - 1;  // keys 0 … last are visible
    const double scale = 1.0 / sqrt(double(D));
    double mx = -INFINITY;
    for (int j = warp; j < Sk; j += kThreads / 32) {  // a warp per key: coalesced reads of K's row
        double dot = 0;
        for (int d = lane; d < D; d += 32) dot += qs[d] * double(kh[size_t(j) * D + d]);
        dot = warp_sum(dot);
        const double x = j <= last ? dot * scale : -INFINITY;
        if (lane == 0) s[j] = x;
        mx = fmax(mx, x);
    }
    if (lane == 0) red[warp] = mx;
    __syncthreads();
    mx = -INFINITY;
    for (int w = 0; w < kThreads / 32; ++w) mx = fmax(mx, red[w]);
    __syncthreads();
    double sum = 0;
    for (int j = tid; j < Sk; j += kThreads) {
        const double e = j <= last ? exp(s[j] - mx) : 0.0;
        s[j] = e;
        sum += e;
    }
    sum = warp_sum(sum);
    if (lane == 0) red[warp] = sum;
    __syncthreads();
    sum = 0;
    for (int w = 0; w < kThreads / 32; ++w) sum += red[w];
    double d2 = 0, w2 = 0, dmax = 0;
    for (int d = tid; d < D; d += kThreads) {
        double a = 0;
        for (int j = 0; j <= last && j < Sk; ++j) a += s[j] * double(vh[size_t(j) * D + d]);
        const double want = sum > 0 ? a / sum : 0.0;
        const double got = o[(bh * Sq + row) * D + d];
        const double diff = got - want;
        d2 += diff * diff, w2 += want * want;
        dmax = fmax(dmax, isnan(diff) ? INFINITY : fabs(diff));
    }
    d2 = warp_sum(d2), w2 = warp_sum(w2), dmax = warp_max(dmax);
    if (lane == 0) {
        atomicAdd(acc, d2);
        atomicAdd(acc + 1, w2);
        atomicMax(reinterpret_cast<unsigned long long*>(acc + 2), __double_as_longlong(dmax));
    }
}

// Heads h0 … h0+nh−1 of [BH, S, D] tensors; rows: all (stride 1) or every stride-th (shifted by one each time).
inline ErrorStats error_vs_f64(const float* q, const float* k, const float* v, const float* o, int Sq, int Sk, int D,
                               bool causal, int h0, int nh, int stride) {
    const size_t smem = (size_t(D) + Sk + kThreads / 32) * sizeof(double);
    if (smem > 200 * 1024) throw std::invalid_argument("error_vs_f64: Sk = " + std::to_string(Sk) + " is too long");
    static const bool attr_set = [] {
        CUDA_CHECK(cudaFuncSetAttribute(error_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
        return true;
    }();
    (void)attr_set;
    attn::DeviceBuffer<double> acc(3);
    CUDA_CHECK(cudaMemset(acc.get(), 0, acc.bytes()));
    const int rows = (Sq + stride - 1) / stride;
    error_kernel<<<dim3(unsigned(rows), unsigned(nh)), kThreads, smem>>>(q, k, v, o, Sq, Sk, D, causal, h0, stride, acc.get());
    CUDA_CHECK_LAUNCH();
    const std::vector<double> h = acc.download();
    ErrorStats e;
    e.max_abs = h[2], e.rel_l2 = h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
    return e;
}

}  // namespace f64
}  // namespace task4_ladder
