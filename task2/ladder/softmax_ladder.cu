// softmax_ladder.cu — Task 2's softmax ladder (course staff material, not in the student kit).
//   plan            one block of 256 threads per row; three passes over the row (max, sum of
//                   exp(x − max), normalise), each reduction a tree in shared memory: the row is
//                   read three times and written once
//   float4          the same three passes with 16-byte loads and __shfl_xor_sync reductions: a
//                   quarter of the load instructions, no shared-memory trees
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

template <bool IS_MAX>
__device__ float warp_then_block(float v, float* warp_part) {
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(0xffffffff, v, off);
        v = IS_MAX ? fmaxf(v, o) : v + o;
    }
    if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = v;
    __syncthreads();
    float r = warp_part[0];
    for (int w = 1; w < kThreads / 32; ++w) r = IS_MAX ? fmaxf(r, warp_part[w]) : r + warp_part[w];
    __syncthreads();  // warp_part is reused by the next reduction
    return r;
}

// The plan's three passes with 16-byte loads (rows whose length is a multiple of 4) and warp
// shuffles instead of shared-memory trees.
__global__ void __launch_bounds__(kThreads) vec4_kernel(const float* in, float* out, int cols) {
    __shared__ float warp_part[kThreads / 32];
    const float4* x = reinterpret_cast<const float4*>(in + size_t(blockIdx.x) * cols);
    float4* y = reinterpret_cast<float4*>(out + size_t(blockIdx.x) * cols);
    const int n4 = cols / 4;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < n4; i += kThreads) {
        const float4 v = x[i];
        m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
    m = warp_then_block<true>(m, warp_part);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n4; i += kThreads) {
        const float4 v = x[i];
        s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
    }
    const float inv = 1.0f / warp_then_block<false>(s, warp_part);
    for (int i = threadIdx.x; i < n4; i += kThreads) {
        const float4 v = x[i];
        y[i] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv, expf(v.w - m) * inv);
    }
}

}  // namespace

void softmax_three_pass(const float* in, float* out, int rows, int cols) {
    if (rows == 0) return;
    three_pass_kernel<<<rows, kThreads>>>(in, out, cols);
    CUDA_CHECK_LAUNCH();
}

void softmax_vec4(const float* in, float* out, int rows, int cols) {
    if (rows == 0) return;
    if (cols % 4 != 0) return softmax_three_pass(in, out, rows, cols);
    vec4_kernel<<<rows, kThreads>>>(in, out, cols);
    CUDA_CHECK_LAUNCH();
}

}  // namespace task2_ladder
