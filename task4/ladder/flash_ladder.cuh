// flash_ladder.cuh — Task 4's optimisation ladder (course staff material, not in the student kit):
// the fused FlashAttention forward written the ways a student climbs, each a complete, correct
// kernel, so that every rung's speed can be measured with the project's benchmark and its credit
// with the grader.
//
//   thread_per_row_kernel   one thread per query row, D known only at run time (the course's old
//                           plan: float acc[128] indexed by a run-time d lives in local memory)
//   tiled_kernel<D, Rung>   a thread block of Br query rows walks the keys Bc at a time; threads form
//                           row groups of 16 lanes, each thread holds a TM × TN block of scores and
//                           a TM × D/16 block of the output in registers (the skeleton's plan is
//                           Rung Plan below). The Rung's switches add, one at a time, what the
//                           reference (task4/reference/) has:
//     PAD            rows of shared memory padded by 4 floats: the 16 lanes' float4 reads of 16
//                    different K rows land in different banks instead of all in the same one
//     FAST_SOFTMAX   scores kept in base 2 (exp2 with log2(e)/√D folded into one multiply), and the
//                    mask tested only in tiles that cross the diagonal or the end of K
//     SHARE_KP       P overwrites K once the scores are computed: Q + K/P + V fit twice per SM
//     ASYNC          cp.async: the V tile arrives while S = Q·Kᵀ is computed
//
// Build and run (staff):  make ladder-task4 IMPL=reference   (bench: build/reference/bin/ladder_task4)
// A rung as a submission (calibration of the credit curve): task4/ladder/submission_<rung>.cu.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"

namespace task4_ladder {

struct Params {
    const float *q, *k, *v;
    float* o;
    int Sq, Sk;
    bool causal;
    float scale;       // 1/√D
    float scale_log2;  // log2(e)/√D: exp(x/√D) = exp2(x · scale_log2)
};

// ------------------------------------------------------------------------------------------------
// The old plan: one thread per query row; D at run time, so the thread's output row is an array
// indexed by a run-time value — local memory, not registers.
// ------------------------------------------------------------------------------------------------
template <int BR, int BC>
__global__ void __launch_bounds__(BR) thread_per_row_kernel(Params p, int D) {
    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;
    float* Ks = Qs + BR * D;
    float* Vs = Ks + BC * D;
    const size_t bh = blockIdx.y;
    const float* q = p.q + bh * p.Sq * D;
    const float* k = p.k + bh * p.Sk * D;
    const float* v = p.v + bh * p.Sk * D;
    const int r0 = blockIdx.x * BR, tid = threadIdx.x, row = r0 + tid, offset = p.Sk - p.Sq;
    for (int i = tid; i < BR * D; i += BR) Qs[i] = r0 + i / D < p.Sq ? q[size_t(r0) * D + i] : 0.0f;
    float acc[128];
    for (int d = 0; d < D; ++d) acc[d] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    const int kv_end = p.causal ? min(p.Sk, min(r0 + BR, p.Sq) + offset) : p.Sk;
    for (int c0 = 0; c0 < kv_end; c0 += BC) {
        __syncthreads();
        for (int i = tid; i < BC * D; i += BR) {
            const bool valid = c0 + i / D < p.Sk;
            Ks[i] = valid ? k[size_t(c0) * D + i] : 0.0f;
            Vs[i] = valid ? v[size_t(c0) * D + i] : 0.0f;
        }
        __syncthreads();
        float s[BC], tile_max = -INFINITY;
        for (int j = 0; j < BC; ++j) {
            float dot = 0.0f;
            for (int d = 0; d < D; ++d) dot += Qs[tid * D + d] * Ks[j * D + d];
            const int col = c0 + j;
            s[j] = (col >= p.Sk || (p.causal && col > row + offset)) ? -INFINITY : dot * p.scale;
            tile_max = fmaxf(tile_max, s[j]);
        }
        const float m_new = fmaxf(m, tile_max);
        const float alpha = m_new == -INFINITY ? 1.0f : expf(m - m_new);
        l *= alpha;
        for (int d = 0; d < D; ++d) acc[d] *= alpha;
        for (int j = 0; j < BC; ++j) {
            const float pj = m_new == -INFINITY ? 0.0f : expf(s[j] - m_new);
            l += pj;
            for (int d = 0; d < D; ++d) acc[d] += pj * Vs[j * D + d];
        }
        m = m_new;
    }
    if (row < p.Sq) {
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
        for (int d = 0; d < D; ++d) p.o[(bh * p.Sq + row) * D + d] = acc[d] * inv;
    }
}

// ------------------------------------------------------------------------------------------------
// The register-tiled family.
// ------------------------------------------------------------------------------------------------
template <int BR_, int BC_, int THREADS_, bool PAD_, bool FAST_SOFTMAX_, bool SHARE_KP_, bool ASYNC_>
struct Rung {
    static constexpr int BR = BR_, BC = BC_, THREADS = THREADS_;
    static constexpr bool PAD = PAD_, FAST_SOFTMAX = FAST_SOFTMAX_, SHARE_KP = SHARE_KP_, ASYNC = ASYNC_;
};

template <int D, class R>
struct Tile {
    static constexpr int BR = R::BR, BC = R::BC, THREADS = R::THREADS;
    static constexpr int TY = THREADS / 16, TM = BR / TY, TN = BC / 16, DV = D / 16;
    static constexpr bool VEC = D % 64 == 0;
    static constexpr int LD = D + (R::PAD ? 4 : 0), LDP = BC + (R::PAD ? 4 : 0);
    static constexpr int Q_FLOATS = BR * LD, K_FLOATS = BC * LD, P_FLOATS = BR * LDP, V_FLOATS = BC * LD;
    static constexpr int KP_FLOATS = R::SHARE_KP ? (K_FLOATS > P_FLOATS ? K_FLOATS : P_FLOATS) : K_FLOATS + P_FLOATS;
    static constexpr size_t SMEM_BYTES = size_t(Q_FLOATS + KP_FLOATS + V_FLOATS) * sizeof(float);
    static_assert(THREADS % 32 == 0 && BR % TY == 0 && TM >= 1 && BC % 16 == 0 && D % 16 == 0, "illegal tile");
};

__device__ __forceinline__ void cp_async16(float* smem_dst, const float* src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// rows × D floats (rows row0 … of a [len, D] matrix) into a tile with row stride LD; zeros past len.
template <int D, int ROWS, int THREADS, int LD, bool ASYNC>
__device__ __forceinline__ void load_tile(float* tile, const float* src, int row0, int len) {
    constexpr int CHUNKS = ROWS * D / 4;
    for (int c = threadIdx.x; c < CHUNKS; c += THREADS) {
        const int r = c / (D / 4), col = (c % (D / 4)) * 4;
        const bool valid = row0 + r < len;
        const float* from = src + size_t(valid ? row0 + r : 0) * D + col;
        if constexpr (ASYNC) {
            cp_async16(tile + r * LD + col, from, valid);
        } else {
            *reinterpret_cast<float4*>(tile + r * LD + col) =
                valid ? *reinterpret_cast<const float4*>(from) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
    }
}

template <int D, class R>
__global__ void __launch_bounds__(R::THREADS) tiled_kernel(Params p) {
    using T = Tile<D, R>;
    constexpr int BR = T::BR, BC = T::BC, THREADS = T::THREADS, TM = T::TM, TN = T::TN, DV = T::DV, LD = T::LD,
                  LDP = T::LDP;
    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;
    float* Ks = smem + T::Q_FLOATS;
    float* Ps = R::SHARE_KP ? Ks : Ks + T::K_FLOATS;
    float* Vs = Ks + T::KP_FLOATS;

    const int row_blocks = (p.Sq + BR - 1) / BR;
    const int rb = p.causal ? row_blocks - 1 - int(blockIdx.x) : int(blockIdx.x);  // heaviest row blocks first
    const int r0 = rb * BR;
    const size_t bh = blockIdx.y;
    const float* q = p.q + bh * p.Sq * D;
    const float* k = p.k + bh * p.Sk * D;
    const float* v = p.v + bh * p.Sk * D;
    float* o = p.o + bh * p.Sq * D;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int offset = p.Sk - p.Sq;

    float acc[TM][DV], m[TM], l[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        m[i] = -INFINITY, l[i] = 0.0f;
#pragma unroll
        for (int d = 0; d < DV; ++d) acc[i][d] = 0.0f;
    }
    load_tile<D, BR, THREADS, LD, R::ASYNC>(Qs, q, r0, p.Sq);
    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? min(p.Sk, last_row + offset + 1) : p.Sk;

    for (int c0 = 0; c0 < kv_end; c0 += BC) {
        __syncthreads();  // everyone is done with the previous K, P and V
        load_tile<D, BC, THREADS, LD, R::ASYNC>(Ks, k, c0, p.Sk);
        if constexpr (R::ASYNC) cp_async_commit();
        load_tile<D, BC, THREADS, LD, R::ASYNC>(Vs, v, c0, p.Sk);
        if constexpr (R::ASYNC) {
            cp_async_commit();
            cp_async_wait<1>();  // Q and K have landed; V may still be in flight
        }
        __syncthreads();

        float s[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) s[i][j] = 0.0f;
#pragma unroll 4
        for (int d = 0; d < D; d += 4) {
            float4 qv[TM], kv[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) qv[i] = *reinterpret_cast<const float4*>(Qs + (ty * TM + i) * LD + d);
#pragma unroll
            for (int j = 0; j < TN; ++j) kv[j] = *reinterpret_cast<const float4*>(Ks + (tx + 16 * j) * LD + d);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    s[i][j] = fmaf(qv[i].x, kv[j].x, fmaf(qv[i].y, kv[j].y, fmaf(qv[i].z, kv[j].z, fmaf(qv[i].w, kv[j].w, s[i][j]))));
        }

        const bool masked = !R::FAST_SOFTMAX || c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > r0 + offset);
        const float scale = R::FAST_SOFTMAX ? p.scale_log2 : p.scale;
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = r0 + ty * TM + i;
            float row_max = -INFINITY;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int col = c0 + tx + 16 * j;
                float x = s[i][j] * scale;
                if (masked && (col >= p.Sk || (p.causal && col > row + offset))) x = -INFINITY;
                s[i][j] = x;
                row_max = fmaxf(row_max, x);
            }
#pragma unroll
            for (int off = 8; off > 0; off >>= 1) row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffff, row_max, off));
            const float m_new = fmaxf(m[i], row_max);
            float alpha, sum = 0.0f;
            if constexpr (R::FAST_SOFTMAX) {
                alpha = m_new == -INFINITY ? 1.0f : exp2f(m[i] - m_new);
#pragma unroll
                for (int j = 0; j < TN; ++j) s[i][j] = m_new == -INFINITY ? 0.0f : exp2f(s[i][j] - m_new), sum += s[i][j];
            } else {
                alpha = m_new == -INFINITY ? 1.0f : expf(m[i] - m_new);
#pragma unroll
                for (int j = 0; j < TN; ++j) s[i][j] = m_new == -INFINITY ? 0.0f : expf(s[i][j] - m_new), sum += s[i][j];
            }
            l[i] = l[i] * alpha + sum;
            m[i] = m_new;
#pragma unroll
            for (int d = 0; d < DV; ++d) acc[i][d] *= alpha;
        }

        if constexpr (R::SHARE_KP) __syncthreads();  // every read of K is done: P takes its place
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) Ps[(ty * TM + i) * LDP + tx + 16 * j] = s[i][j];
        if constexpr (R::ASYNC) cp_async_wait<0>();  // V has landed
        __syncthreads();

#pragma unroll 2
        for (int c = 0; c < BC; c += 4) {
            float4 pv[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i) pv[i] = *reinterpret_cast<const float4*>(Ps + (ty * TM + i) * LDP + c);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                float vv[DV];
                const float* vrow = Vs + (c + u) * LD;
                if constexpr (T::VEC) {
#pragma unroll
                    for (int k4 = 0; k4 < DV / 4; ++k4)
                        *reinterpret_cast<float4*>(vv + 4 * k4) = *reinterpret_cast<const float4*>(vrow + k4 * 64 + tx * 4);
                } else {
#pragma unroll
                    for (int d = 0; d < DV; ++d) vv[d] = vrow[tx + 16 * d];
                }
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float pu = u == 0 ? pv[i].x : u == 1 ? pv[i].y : u == 2 ? pv[i].z : pv[i].w;
#pragma unroll
                    for (int d = 0; d < DV; ++d) acc[i][d] = fmaf(pu, vv[d], acc[i][d]);
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        float li = l[i];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) li += __shfl_xor_sync(0xffffffff, li, off);
        const int row = r0 + ty * TM + i;
        if (row >= p.Sq) continue;
        const float inv = li > 0.0f ? 1.0f / li : 0.0f;
        float* orow = o + size_t(row) * D;
        if constexpr (T::VEC) {
#pragma unroll
            for (int k4 = 0; k4 < DV / 4; ++k4)
                *reinterpret_cast<float4*>(orow + k4 * 64 + tx * 4) =
                    make_float4(acc[i][4 * k4] * inv, acc[i][4 * k4 + 1] * inv, acc[i][4 * k4 + 2] * inv, acc[i][4 * k4 + 3] * inv);
        } else {
#pragma unroll
            for (int d = 0; d < DV; ++d) orow[tx + 16 * d] = acc[i][d] * inv;
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Launchers with Task 4's interface.
// ------------------------------------------------------------------------------------------------
inline Params make_params(const float* q, const float* k, const float* v, float* o, int Sq, int Sk, int D, bool causal) {
    return {q, k, v, o, Sq, Sk, causal, float(1.0 / std::sqrt(double(D))), float(1.4426950408889634 / std::sqrt(double(D)))};
}

inline void check_args(int D, int Sk) {
    if (D != 32 && D != 64 && D != 96 && D != 128)
        throw std::invalid_argument("flash_attention_forward: head_dim " + std::to_string(D) + " is not supported (32, 64, 96 or 128)");
    if (Sk == 0) throw std::invalid_argument("flash_attention_forward: Sk = 0 (no keys to attend to)");
}

template <int D, class R>
void launch_tiled(const Params& p, int BH) {
    using T = Tile<D, R>;
    auto kernel = tiled_kernel<D, R>;
    static const bool attr_set = [&] {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(T::SMEM_BYTES)));
        return true;
    }();
    (void)attr_set;
    kernel<<<dim3((p.Sq + R::BR - 1) / R::BR, BH), R::THREADS, T::SMEM_BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
}

template <class R>
void forward_tiled(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk, int D, bool causal) {
    check_args(D, Sk);
    if (B * H == 0 || Sq == 0) return;
    const Params p = make_params(q, k, v, o, Sq, Sk, D, causal);
    switch (D) {
        case 32: launch_tiled<32, R>(p, B * H); break;
        case 64: launch_tiled<64, R>(p, B * H); break;
        case 96: launch_tiled<96, R>(p, B * H); break;
        default: launch_tiled<128, R>(p, B * H); break;
    }
}

inline void forward_thread_per_row(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                                   int D, bool causal) {
    constexpr int BR = 32, BC = 32;
    check_args(D, Sk);
    if (B * H == 0 || Sq == 0) return;
    const size_t smem = size_t(BR + 2 * BC) * D * sizeof(float);
    static const bool attr_set = [] {
        CUDA_CHECK(cudaFuncSetAttribute(thread_per_row_kernel<BR, BC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int((BR + 2 * BC) * 128 * sizeof(float))));
        return true;
    }();
    (void)attr_set;
    thread_per_row_kernel<BR, BC><<<dim3((Sq + BR - 1) / BR, B * H), BR, smem>>>(make_params(q, k, v, o, Sq, Sk, D, causal), D);
    CUDA_CHECK_LAUNCH();
}

// The steps measured (docs/perf.md) and taught (task4/README.md), in order. The first three are
// what the skeleton's plan avoids; the plan is ThreeBuffers with P written over K.
//                         BR  BC  threads PAD    FAST   SHARE  ASYNC
using NoPad        = Rung<64, 64, 128, false, false, false, false>;
using ThreeBuffers = Rung<64, 64, 128, true,  false, false, false>;
using Plan         = Rung<64, 64, 128, true,  false, true,  false>;
using FastSoftmax  = Rung<64, 64, 128, true,  true,  true,  false>;
using Async        = Rung<64, 64, 128, true,  true,  true,  true>;

}  // namespace task4_ladder
