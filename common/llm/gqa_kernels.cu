// gqa_kernels.cu — see gqa_kernels.h. One thread per element (a pair of elements for RoPE), grid-stride loops.
#include "common/llm/gqa_kernels.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"

namespace llm {
namespace {

constexpr int kThreads = 256;
unsigned blocks_for(size_t n) { return unsigned(std::min<size_t>((n + kThreads - 1) / kThreads, 1u << 20)); }

#define GRID_STRIDE(i, n) for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < (n); i += size_t(gridDim.x) * blockDim.x)

__global__ void split_rope_kernel(const float* qkv, const int* positions, const float* cosines, const float* sines, int Hq,
                                  int Hkv, int D, __nv_bfloat16* q, __nv_bfloat16* k, __nv_bfloat16* v, size_t n) {
    const int half = D / 2, heads = Hq + 2 * Hkv;
    GRID_STRIDE(i, n) {
        const int c = int(i % half);
        const size_t rest = i / half;
        const int h = int(rest % heads);  // over the query, K and V heads in the projection's order
        const size_t t = rest / heads;
        const float* src = qkv + (t * heads + h) * D;
        float x1 = src[c], x2 = src[c + half];
        if (h < Hq + Hkv) {  // q and k are rotated, v is not
            const size_t at = size_t(positions[t]) * half + c;
            const float cs = cosines[at], sn = sines[at];
            const float r1 = x1 * cs - x2 * sn, r2 = x2 * cs + x1 * sn;
            x1 = r1, x2 = r2;
        }
        __nv_bfloat16* dst = h < Hq         ? q + (t * Hq + h) * D
                             : h < Hq + Hkv ? k + (t * Hkv + h - Hq) * D
                                            : v + (t * Hkv + h - Hq - Hkv) * D;
        dst[c] = __float2bfloat16_rn(x1), dst[c + half] = __float2bfloat16_rn(x2);
    }
}

__global__ void tokens_to_heads_kernel(const __nv_bfloat16* src, __nv_bfloat16* dst, int T, int Hs, int Hd, int D, size_t n) {
    const int g = Hd / Hs;
    GRID_STRIDE(i, n) {  // i over dst [Hd, T, D]
        const int d = int(i % D);
        const size_t rest = i / D;
        const int t = int(rest % T), h = int(rest / T);
        dst[i] = src[(size_t(t) * Hs + h / g) * D + d];
    }
}

__global__ void heads_to_tokens_kernel(const __nv_bfloat16* src, __nv_bfloat16* dst, int T, int H, int D, size_t n) {
    GRID_STRIDE(i, n) {  // i over dst [T, H, D]
        const int d = int(i % D);
        const size_t rest = i / D;
        const int h = int(rest % H), t = int(rest / H);
        dst[i] = src[(size_t(h) * T + t) * D + d];
    }
}

}  // namespace

void split_rope_bf16(const float* qkv, const int* positions, const float* rope_cos, const float* rope_sin, int T, int Hq,
                     int Hkv, int D, __nv_bfloat16* q, __nv_bfloat16* k, __nv_bfloat16* v) {
    const size_t n = size_t(T) * (Hq + 2 * Hkv) * (D / 2);
    if (n == 0) return;
    split_rope_kernel<<<blocks_for(n), kThreads>>>(qkv, positions, rope_cos, rope_sin, Hq, Hkv, D, q, k, v, n);
    CUDA_CHECK_LAUNCH();
}

void tokens_to_heads_bf16(const __nv_bfloat16* src, __nv_bfloat16* dst, int T, int Hs, int Hd, int D) {
    if (Hs < 1 || Hd % Hs)
        throw std::invalid_argument("tokens_to_heads_bf16: " + std::to_string(Hd) + " heads out is not a multiple of " +
                                    std::to_string(Hs) + " heads in");
    const size_t n = size_t(T) * Hd * D;
    if (n == 0) return;
    tokens_to_heads_kernel<<<blocks_for(n), kThreads>>>(src, dst, T, Hs, Hd, D, n);
    CUDA_CHECK_LAUNCH();
}

void heads_to_tokens_bf16(const __nv_bfloat16* src, __nv_bfloat16* dst, int T, int H, int D) {
    const size_t n = size_t(T) * H * D;
    if (n == 0) return;
    heads_to_tokens_kernel<<<blocks_for(n), kThreads>>>(src, dst, T, H, D, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace llm
