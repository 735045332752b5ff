// skinny_gemm.cu — see skinny_gemm.h. One warp per row of W: each lane streams float4 strips of the
// row, kUnroll strips at a time so that many loads are in flight (W is read once: loaded with the
// evict-first hint), and takes x's matching float4s through the read-only cache (x is small and
// read by every warp). No shared memory, no barriers; the T sums reduce across the warp at the end.
// Built into the model code of Tasks 6 and 7 (bench_task6 times it against cuBLAS).
#include <cstdint>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/llm/skinny_gemm.h"

namespace llm {
namespace {

constexpr int kWarps = 8, kUnroll = 8;

template <int T>
__global__ void __launch_bounds__(kWarps * 32) skinny_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                                             float* __restrict__ y, int N, int K, float beta) {
    const int lane = threadIdx.x & 31, row = blockIdx.x * kWarps + (threadIdx.x >> 5);
    if (row >= N) return;
    const float4* w = reinterpret_cast<const float4*>(W + size_t(row) * K);
    const int K4 = K / 4;
    float acc[T] = {};
    for (int c0 = lane; c0 < K4; c0 += 32 * kUnroll) {
        float4 wv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int c = c0 + 32 * u;
            wv[u] = c < K4 ? __ldcs(w + c) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int c = c0 + 32 * u;
            if (c >= K4) break;
#pragma unroll
            for (int t = 0; t < T; ++t) {
                const float4 xv = __ldg(reinterpret_cast<const float4*>(x + size_t(t) * K) + c);
                acc[t] += wv[u].x * xv.x + wv[u].y * xv.y + wv[u].z * xv.z + wv[u].w * xv.w;
            }
        }
    }
#pragma unroll
    for (int t = 0; t < T; ++t) {
        float v = acc[t];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0) {
            float* out = y + size_t(t) * N + row;
            *out = beta == 0.f ? v : v + beta * *out;
        }
    }
}

template <int T>
void launch(const float* x, const float* W, float* y, int N, int K, float beta) {
    skinny_kernel<T><<<(N + kWarps - 1) / kWarps, kWarps * 32>>>(x, W, y, N, K, beta);
    CUDA_CHECK_LAUNCH();
}

bool aligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

bool skinny_gemm_nt(const float* x, const float* W, float* y, int T, int N, int K, float beta) {
    if (T < 1 || T > kSkinnyMaxRows || K % 4 != 0 || !aligned(x) || !aligned(W)) return false;
    switch (T) {
    case 1: launch<1>(x, W, y, N, K, beta); break;
    case 2: launch<2>(x, W, y, N, K, beta); break;
    case 3: launch<3>(x, W, y, N, K, beta); break;
    case 4: launch<4>(x, W, y, N, K, beta); break;
    case 5: launch<5>(x, W, y, N, K, beta); break;
    case 6: launch<6>(x, W, y, N, K, beta); break;
    case 7: launch<7>(x, W, y, N, K, beta); break;
    default: launch<8>(x, W, y, N, K, beta); break;
    }
    return true;
}

namespace {
int skinny_max_k = 8192;
}  // namespace

void set_skinny_max_k(int k) { skinny_max_k = k; }

void linear_nt(attn::CublasGemm& gemm, const float* x, const float* W, float* y, int T, int N, int K, float beta) {
    if (K > skinny_max_k || !skinny_gemm_nt(x, W, y, T, N, K, beta)) gemm.nt(x, W, y, 1, T, N, K, 1.f, beta);
}

}  // namespace llm
