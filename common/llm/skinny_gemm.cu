// skinny_gemm.cu — see skinny_gemm.h. Each warp owns kRowsPerWarp rows of W and reads them in
// float4 strips of 128 floats, 8 strips unrolled so that many loads are in flight; x is staged in
// shared memory one K-tile at a time and shared by the block's rows. Sums reduce across the warp.
// Built into the model code of Tasks 6 and 7 (bench_task6 times it against cuBLAS).
#include <cstdint>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/llm/skinny_gemm.h"

namespace llm {
namespace {

constexpr int kWarps = 4, kRowsPerWarp = 2, kTileK = 1024, kStrips = kTileK / 128;

template <int T>
__global__ void __launch_bounds__(kWarps * 32) skinny_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                                             float* __restrict__ y, int N, int K, float beta) {
    __shared__ float4 xs[T][kTileK / 4];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int row0 = (blockIdx.x * kWarps + warp) * kRowsPerWarp;
    float acc[kRowsPerWarp][T] = {};
    for (int k0 = 0; k0 < K; k0 += kTileK) {
        const int tile4 = min(kTileK, K - k0) / 4;
        __syncthreads();
        for (int i = threadIdx.x; i < T * (kTileK / 4); i += blockDim.x) {
            const int t = i / (kTileK / 4), c = i % (kTileK / 4);
            xs[t][c] = c < tile4 ? reinterpret_cast<const float4*>(x + size_t(t) * K + k0)[c] : make_float4(0, 0, 0, 0);
        }
        __syncthreads();
        float4 w[kRowsPerWarp][kStrips];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
            for (int s = 0; s < kStrips; ++s) {
                const int c = s * 32 + lane;
                w[r][s] = (row0 + r < N && c < tile4) ? __ldg(reinterpret_cast<const float4*>(W + size_t(row0 + r) * K + k0) + c)
                                                      : make_float4(0, 0, 0, 0);
            }
#pragma unroll
        for (int s = 0; s < kStrips; ++s)
#pragma unroll
            for (int t = 0; t < T; ++t) {
                const float4 xv = xs[t][s * 32 + lane];
#pragma unroll
                for (int r = 0; r < kRowsPerWarp; ++r)
                    acc[r][t] += w[r][s].x * xv.x + w[r][s].y * xv.y + w[r][s].z * xv.z + w[r][s].w * xv.w;
            }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
        for (int t = 0; t < T; ++t) {
            float v = acc[r][t];
            for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if (lane == 0 && row0 + r < N) {
                float* out = y + size_t(t) * N + row0 + r;
                *out = beta == 0.f ? v : v + beta * *out;
            }
        }
}

template <int T>
void launch(const float* x, const float* W, float* y, int N, int K, float beta) {
    const int rows_per_block = kWarps * kRowsPerWarp;
    skinny_kernel<T><<<(N + rows_per_block - 1) / rows_per_block, kWarps * 32>>>(x, W, y, N, K, beta);
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

void linear_nt(attn::CublasGemm& gemm, const float* x, const float* W, float* y, int T, int N, int K, float beta) {
    if (!skinny_gemm_nt(x, W, y, T, N, K, beta)) gemm.nt(x, W, y, 1, T, N, K, 1.f, beta);
}

}  // namespace llm
