// softmax_ladder.cu — Task 2's softmax ladder (course staff material, not in the student kit).
//   plan            one block of 256 threads per row; three passes over the row (max, sum of
//                   exp(x − max), normalise), each reduction a tree in shared memory: the row is
//                   read three times and written once
//   online          a running (max, sum) per thread in one pass (the online-softmax rule: the sum
//                   is rescaled when the max moves), reduced with __shfl_xor_sync: two reads and
//                   one write
//   reference       task2/reference: the row held in registers as float4s: one read, one write
// Build and run (staff):  make ladder-task2 IMPL=reference   (build/reference/bin/ladder_task2)
#include <cuda_runtime.h>

#include <cmath>

#include "common/cuda/cuda_check.h"
#include "task2/ladder/ladder.h"

namespace task2_ladder {
namespace {

constexpr int kThreads = 256;

template <bool IS_MAX>
__device__ float tree_reduce(float v, float* buf) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            buf[threadIdx.x] = IS_MAX ? fmaxf(buf[threadIdx.x], buf[threadIdx.x + stride]) : buf[threadIdx.x] + buf[threadIdx.x + stride];
        __syncthreads();
    }
    const float r = buf[0];
    __syncthreads();  // buf is reused by the next reduction
    return r;
}

__global__ void __launch_bounds__(kThreads) three_pass_kernel(const float* in, float* out, int cols) {
    __shared__ float buf[kThreads];
    const float* x = in + size_t(blockIdx.x) * cols;
    float* y = out + size_t(blockIdx.x) * cols;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += kThreads) m = fmaxf(m, x[i]);
    m = tree_reduce<true>(m, buf);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += kThreads) s += expf(x[i] - m);
    s = tree_reduce<false>(s, buf);
    for (int i = threadIdx.x; i < cols; i += kThreads) y[i] = expf(x[i] - m) / s;
}

struct MaxSum {
    float m, s;
};
// one value into a running (max, sum): one exp per value, two when the max moves
__device__ __forceinline__ MaxSum push(MaxSum a, float x) {
    if (x == -INFINITY) return a;  // a masked score adds nothing
    if (x > a.m) return {x, a.s * expf(a.m - x) + 1.0f};
    return {a.m, a.s + expf(x - a.m)};
}
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__global__ void __launch_bounds__(kThreads) online_kernel(const float* in, float* out, int cols) {
    __shared__ MaxSum warp_part[kThreads / 32];
    const float* x = in + size_t(blockIdx.x) * cols;
    float* y = out + size_t(blockIdx.x) * cols;
    MaxSum v{-INFINITY, 0.0f};
    for (int i = threadIdx.x; i < cols; i += kThreads) v = push(v, x[i]);
    for (int off = 16; off > 0; off >>= 1)
        v = merge(v, {__shfl_xor_sync(0xffffffff, v.m, off), __shfl_xor_sync(0xffffffff, v.s, off)});
    if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = v;
    __syncthreads();
    MaxSum row{-INFINITY, 0.0f};
    for (int w = 0; w < kThreads / 32; ++w) row = merge(row, warp_part[w]);
    const float inv = 1.0f / row.s;
    for (int i = threadIdx.x; i < cols; i += kThreads) y[i] = expf(x[i] - row.m) * inv;
}

}  // namespace

void softmax_three_pass(const float* in, float* out, int rows, int cols) {
    if (rows == 0) return;
    three_pass_kernel<<<rows, kThreads>>>(in, out, cols);
    CUDA_CHECK_LAUNCH();
}

void softmax_online(const float* in, float* out, int rows, int cols) {
    if (rows == 0) return;
    online_kernel<<<rows, kThreads>>>(in, out, cols);
    CUDA_CHECK_LAUNCH();
}

}  // namespace task2_ladder
