// wmma_bf16.cu — rung 1 of the bf16 ladder: the skeleton's plan (task4_bf16/reference/flash_attention_bf16.cu,
// "Your kernel"), done with WMMA fragments (nvcuda::wmma 16×16×16, bf16 operands, float accumulators).
// A block of 4 warps owns 64 query rows of one (batch, head) and walks the keys 64 at a time: warp w computes
// its 16 rows of S = Q·Kᵀ into shared memory (fp32), two threads per row run the online softmax on them and
// write P (bf16) and rescale the row of O (fp32, in shared memory), then warp w adds P·V to its 16 rows of O
// (accumulator fragments loaded from and stored back to shared memory). Every sum is float.
// Built into the ladder's benchmark: make ladder-task4-bf16 (course repository, a GPU).
#include <cuda_bf16.h>
#include <mma.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "task4_bf16/ladder/ladder_bf16.h"

namespace task4::ladder_bf16 {
namespace {

using namespace nvcuda;
constexpr int BR = 64, BC = 64, THREADS = 128;

template <int D>
struct Smem {
    static constexpr size_t Q = 0, K = Q + BR * D * 2, V = K + BC * D * 2, S = V + BC * D * 2, P = S + BR * BC * 4,
                            O = P + BR * BC * 2, BYTES = O + size_t(BR) * D * 4;
};

template <int D>
__global__ void __launch_bounds__(THREADS) wmma_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                       const __nv_bfloat16* v, __nv_bfloat16* o, int Sq, int Sk,
                                                       bool causal, float scale_log2) {
    using L = Smem<D>;
    extern __shared__ __align__(128) unsigned char smem[];
    auto* Qs = reinterpret_cast<__nv_bfloat16*>(smem + L::Q);
    auto* Ks = reinterpret_cast<__nv_bfloat16*>(smem + L::K);
    auto* Vs = reinterpret_cast<__nv_bfloat16*>(smem + L::V);
    auto* Ss = reinterpret_cast<float*>(smem + L::S);
    auto* Ps = reinterpret_cast<__nv_bfloat16*>(smem + L::P);
    auto* Os = reinterpret_cast<float*>(smem + L::O);
    const int r0 = int(blockIdx.x) * BR;
    const size_t bh = blockIdx.y;
    q += bh * Sq * D, k += bh * Sk * D, v += bh * Sk * D, o += bh * Sq * D;
    const int tid = threadIdx.x, warp = tid / 32, row = tid / 2, half = tid % 2;
    const int offset = Sk - Sq;

    auto load = [&](__nv_bfloat16* dst, const __nv_bfloat16* src, int row0, int len) {
        for (int c = tid; c < 64 * D / 8; c += THREADS) {
            const int r = c / (D / 8), col = (c % (D / 8)) * 8;
            *reinterpret_cast<uint4*>(dst + r * D + col) = row0 + r < len
                ? *reinterpret_cast<const uint4*>(src + size_t(row0 + r) * D + col) : make_uint4(0, 0, 0, 0);
        }
    };
    load(Qs, q, r0, Sq);
    for (int i = tid; i < BR * D; i += THREADS) Os[i] = 0.f;
    float m = -INFINITY, l = 0.f;  // of row `row` (both threads of the pair hold them)
    const int last_row = min(r0 + BR, Sq) - 1;
    const int kv_end = causal ? max(0, min(Sk, last_row + offset + 1)) : Sk;

    for (int c0 = 0; c0 < kv_end; c0 += BC) {
        __syncthreads();
        load(Ks, k, c0, Sk), load(Vs, v, c0, Sk);
        __syncthreads();
        for (int n = 0; n < BC / 16; ++n) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
            wmma::fill_fragment(s, 0.f);
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
                wmma::load_matrix_sync(a, Qs + warp * 16 * D + kk * 16, D);
                wmma::load_matrix_sync(b, Ks + n * 16 * D + kk * 16, D);  // (d, key) at key·D + d: Kᵀ
                wmma::mma_sync(s, a, b, s);
            }
            wmma::store_matrix_sync(Ss + warp * 16 * BC + n * 16, s, BC, wmma::mem_row_major);
        }
        __syncwarp();  // a warp's rows are its own from here to the end of the tile
        const int qrow = r0 + row;
        float x[BC / 2];
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < BC / 2; ++j) {
            const int key = c0 + half * (BC / 2) + j;
            const float s = Ss[row * BC + half * (BC / 2) + j];
            x[j] = (key >= Sk || (causal && key > qrow + offset)) ? -INFINITY : s * scale_log2;
            mx = fmaxf(mx, x[j]);
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        const float m_new = fmaxf(m, mx), m_use = m_new == -INFINITY ? 0.f : m_new, alpha = exp2f(m - m_use);
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < BC / 2; ++j) {
            const float pj = exp2f(x[j] - m_use);
            sum += pj;
            Ps[row * BC + half * (BC / 2) + j] = __float2bfloat16(pj);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        l = l * alpha + sum, m = m_new;
        for (int d = half * (D / 2); d < (half + 1) * (D / 2); ++d) Os[row * D + d] *= alpha;
        __syncwarp();
        for (int n = 0; n < D / 16; ++n) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, Os + warp * 16 * D + n * 16, D, wmma::mem_row_major);
#pragma unroll
            for (int kk = 0; kk < BC / 16; ++kk) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
                wmma::load_matrix_sync(a, Ps + warp * 16 * BC + kk * 16, BC);
                wmma::load_matrix_sync(b, Vs + kk * 16 * D + n * 16, D);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(Os + warp * 16 * D + n * 16, acc, D, wmma::mem_row_major);
        }
        __syncwarp();
    }
    __syncthreads();
    const int qrow = r0 + row;
    if (qrow < Sq) {
        const float inv = l > 0.f ? 1.f / l : 0.f;
        for (int d = half * (D / 2); d < (half + 1) * (D / 2); d += 2)
            *reinterpret_cast<__nv_bfloat162*>(o + size_t(qrow) * D + d) =
                __floats2bfloat162_rn(Os[row * D + d] * inv, Os[row * D + d + 1] * inv);
    }
}

template <int D>
void launch_wmma(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int BH,
                 int Sq, int Sk, bool causal) {
    static const bool attr = [] {
        CUDA_CHECK(cudaFuncSetAttribute(wmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Smem<D>::BYTES)));
        return true;
    }();
    (void)attr;
    if (BH == 0 || Sq == 0) return;
    const dim3 grid(unsigned((Sq + BR - 1) / BR), unsigned(BH));
    wmma_kernel<D><<<grid, THREADS, Smem<D>::BYTES>>>(q, k, v, o, Sq, Sk, causal,
                                                      float(1.4426950408889634 / std::sqrt(double(D))));
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void wmma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                  int H, int Sq, int Sk, int D, bool causal) {
    if (D == 64) launch_wmma<64>(q, k, v, o, B * H, Sq, Sk, causal);
    else if (D == 128) launch_wmma<128>(q, k, v, o, B * H, Sq, Sk, causal);
    else throw std::invalid_argument("wmma_forward: head_dim " + std::to_string(D) + " is not supported (64 or 128)");
}

}  // namespace task4::ladder_bf16
