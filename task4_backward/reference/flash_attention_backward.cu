// Task 4, bonus part 4c — FlashAttention-2's backward pass in fp32 on CUDA cores (interface: task4_backward/task4_backward.h).
//
// Build and run:  make task4-backward                  (your skeleton: the bonus tests; on a GPU)
//                 make task4-backward IMPL=reference   (the model solution)
//                 make bench-task4-backward            (the backward's TFLOP/s on a GPU; tools/vs_torch/sdpa_backward.py times
//                                                       torch's float32 backward beside it)
// Two entry points. flash_attention_forward_lse is Task 4's fused forward that also writes each row's log-sum-exp
// lse = m + log(l), the one number per row the backward needs. flash_attention_backward is FlashAttention-2's
// Algorithm 2: a small pre-kernel computes the row term D_i = rowsum(dO_i ∘ O_i); then one thread block per tile of
// keys holds K_j and V_j in shared memory and its dK_j and dV_j in registers, walks the query tiles, recomputes
// P = exp(S/√D − lse) from lse (nothing of size Sq × Sk is ever stored), and adds its share of dQ with atomics.
// task4/README.md ("Bonus: the backward pass") gives the plan, the tolerance and the measured ladder.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/grid.cuh"
#include "common/cuda/stream_scratch.h"
#include "common/todo.h"
#include "task4_backward/task4_backward.h"

namespace task4 {

#if SOLUTION
// ------------------------------------------------------------------------------------------------
// The reference. Threads form row groups of 16 lanes (tx = lane within the group, ty = the group), as in Task 4's
// forward: a row's values are spread over the 16 lanes of its group, so the reads of a row are broadcasts and the
// reads of 16 different rows (rows padded by 4 floats) hit different banks. Every product below is one of two
// register-tiled shapes:
//   rows × keys   (S = Q·Kᵀ, dP = dO·Vᵀ)   thread (ty, tx): rows 4ty … 4ty+3, keys tx, tx+16, tx+32, tx+48
//   rows × dims   (dV += Pᵀ·dO, dK += dSᵀ·Q, dQ = dS·K)   rows 4ty … 4ty+3, head dims col(tx, e) (float4s when
//                 D % 64 == 0: 4tx … 4tx+3, 64+4tx …; else tx, tx+16, …)
// The backward's key-tile kernel: 256 threads own BC = 64 keys of one (batch, head); shared memory holds K_j, V_j,
// the current Q_i and dO_i (BR = 64 rows), P and dS (BR × BC), and the tile's lse and D_i (170 KB at D = 128: one
// block per SM; where a device has less shared memory, P and dS share one buffer). Per query tile: S and dP
// (registers), P = exp2(S·log2(e)/√D − lse·log2(e)) (0 where masked), dS = P∘(dP − D_i), both to shared memory;
// dV += Pᵀ·dO and dK += dSᵀ·Q into registers; dQ_i += dS·K/√D added to global memory with atomics (float4 atomics
// on sm_90). The next Q_i and dO_i arrive by cp.async while the last block of the tile's work finishes.
// ------------------------------------------------------------------------------------------------
namespace bwd_detail {

constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

__device__ __forceinline__ void cp_async16(float* smem_dst, const float* src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// ROWS × D floats (rows row0 … of a [len, D] matrix) into a tile padded to D + 4 floats a row; zeros past len.
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(float* tile, const float* src, int row0, int len) {
    constexpr int CHUNKS = ROWS * D / 4, LD = D + 4;
    for (int c = threadIdx.x; c < CHUNKS; c += THREADS) {
        const int r = c / (D / 4), col = (c % (D / 4)) * 4;
        const bool valid = row0 + r < len;
        cp_async16(tile + r * LD + col, src + size_t(valid ? row0 + r : 0) * D + col, valid);
    }
}

template <int D>
struct Cols {
    static constexpr int DV = D / 16;         // head dims a thread holds
    static constexpr bool VEC = D % 64 == 0;  // as float4s: col(tx, e) = (e/4)·64 + 4tx + e%4; else tx + 16e
};

// x[e] = row[col(tx, e)]
template <int D>
__device__ __forceinline__ void load_cols(float (&x)[D / 16], const float* row, int tx) {
    if constexpr (Cols<D>::VEC) {
#pragma unroll
        for (int k4 = 0; k4 < D / 64; ++k4) *reinterpret_cast<float4*>(x + 4 * k4) = *reinterpret_cast<const float4*>(row + k4 * 64 + tx * 4);
    } else {
#pragma unroll
        for (int e = 0; e < D / 16; ++e) x[e] = row[tx + 16 * e];
    }
}

// row[col(tx, e)] = x[e] · mult
template <int D>
__device__ __forceinline__ void store_cols(float* row, const float (&x)[D / 16], int tx, float mult) {
    if constexpr (Cols<D>::VEC) {
#pragma unroll
        for (int k4 = 0; k4 < D / 64; ++k4)
            *reinterpret_cast<float4*>(row + k4 * 64 + tx * 4) =
                make_float4(x[4 * k4] * mult, x[4 * k4 + 1] * mult, x[4 * k4 + 2] * mult, x[4 * k4 + 3] * mult);
    } else {
#pragma unroll
        for (int e = 0; e < D / 16; ++e) row[tx + 16 * e] = x[e] * mult;
    }
}

// row[col(tx, e)] += x[e] · mult, atomically: key tiles add into the same rows of dQ concurrently.
template <int D, bool VEC_RED>
__device__ __forceinline__ void atomic_add_cols(float* row, const float (&x)[D / 16], int tx, float mult) {
    if constexpr (Cols<D>::VEC) {
#pragma unroll
        for (int k4 = 0; k4 < D / 64; ++k4) {
            float* a = row + k4 * 64 + tx * 4;
            const float4 v = make_float4(x[4 * k4] * mult, x[4 * k4 + 1] * mult, x[4 * k4 + 2] * mult, x[4 * k4 + 3] * mult);
#if __CUDA_ARCH__ >= 900
            if constexpr (VEC_RED) {
                atomicAdd(reinterpret_cast<float4*>(a), v);  // one red.global.add.v4.f32
                continue;
            }
#endif
            atomicAdd(a, v.x), atomicAdd(a + 1, v.y), atomicAdd(a + 2, v.z), atomicAdd(a + 3, v.w);
        }
    } else {
#pragma unroll
        for (int e = 0; e < D / 16; ++e) atomicAdd(row + tx + 16 * e, x[e] * mult);
    }
}

// ------------------------------------------------------------------------------------------------
// The forward with lse: Task 4's reference kernel (Br = Bc = 64, 128 threads, 8 row groups × 8 rows, K and P in
// one buffer, V by cp.async during S = Q·Kᵀ), writing lse = (m + log2 l)·ln 2 beside O.
// ------------------------------------------------------------------------------------------------
struct FwdParams {
    const float *q, *k, *v;
    float *o, *lse;
    int Sq, Sk;
    bool causal;
    float scale_log2;  // log2(e)/√D: exp(x/√D) = exp2(x · scale_log2)
    long long BH;      // heads: the grid may hold a few more blocks (common/cuda/grid.cuh)
};

constexpr int FWD_BR = 64, FWD_BC = 64, FWD_THREADS = 128, FWD_TM = 8, FWD_TN = 4;

template <int D>
struct FwdSmem {
    static constexpr int LD = D + 4, LDP = FWD_BC + 4;
    static constexpr int Q = 0, KP = FWD_BR * LD, V = KP + (FWD_BC * LD > FWD_BR * LDP ? FWD_BC * LD : FWD_BR * LDP),
                         FLOATS = V + FWD_BC * LD;
    static constexpr size_t BYTES = size_t(FLOATS) * sizeof(float);
};

template <int D>
__global__ void __launch_bounds__(FWD_THREADS) fwd_lse_kernel(FwdParams p) {
    using L = FwdSmem<D>;
    constexpr int TM = FWD_TM, TN = FWD_TN, DV = D / 16, LD = L::LD, LDP = L::LDP;
    extern __shared__ __align__(16) float smem[];
    float* Qs = smem + L::Q;
    float* Ks = smem + L::KP;  // K, then P of the same tile
    float* Ps = Ks;
    float* Vs = smem + L::V;

    const int row_blocks = (p.Sq + FWD_BR - 1) / FWD_BR;
    const int rb = p.causal ? row_blocks - 1 - int(blockIdx.x) : int(blockIdx.x);  // causal: the longest rows first
    const int r0 = rb * FWD_BR;
    const long long bh = attn::head_of_block();  // blockIdx.y, and z past 65535 heads
    if (bh >= p.BH) return;
    const float* q = p.q + bh * p.Sq * D;
    const float* k = p.k + bh * p.Sk * D;
    const float* v = p.v + bh * p.Sk * D;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int offset = p.Sk - p.Sq;  // causal: key j visible to query i iff j ≤ i + offset

    float acc[TM][DV], m[TM], l[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        m[i] = -INFINITY, l[i] = 0.0f;
#pragma unroll
        for (int d = 0; d < DV; ++d) acc[i][d] = 0.0f;
    }

    load_tile<D, FWD_BR, FWD_THREADS>(Qs, q, r0, p.Sq);
    const int last_row = min(r0 + FWD_BR, p.Sq) - 1;
    const int kv_end = p.causal ? min(p.Sk, last_row + offset + 1) : p.Sk;

    for (int c0 = 0; c0 < kv_end; c0 += FWD_BC) {
        __syncthreads();  // everyone is done with the previous K/P and V
        load_tile<D, FWD_BC, FWD_THREADS>(Ks, k, c0, p.Sk);
        cp_async_commit();
        load_tile<D, FWD_BC, FWD_THREADS>(Vs, v, c0, p.Sk);
        cp_async_commit();
        cp_async_wait<1>();  // Q and K have landed; V may still be in flight
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

        const bool masked = c0 + FWD_BC > p.Sk || (p.causal && c0 + FWD_BC - 1 > r0 + offset);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = r0 + ty * TM + i;
            float row_max = -INFINITY;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int col = c0 + tx + 16 * j;
                float x = s[i][j] * p.scale_log2;
                if (masked && (col >= p.Sk || (p.causal && col > row + offset))) x = -INFINITY;
                s[i][j] = x;
                row_max = fmaxf(row_max, x);
            }
#pragma unroll
            for (int off = 8; off > 0; off >>= 1) row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffff, row_max, off));
            const float m_new = fmaxf(m[i], row_max);
            const float alpha = m_new == -INFINITY ? 1.0f : exp2f(m[i] - m_new);
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                s[i][j] = m_new == -INFINITY ? 0.0f : exp2f(s[i][j] - m_new);
                sum += s[i][j];
            }
            l[i] = l[i] * alpha + sum;
            m[i] = m_new;
#pragma unroll
            for (int d = 0; d < DV; ++d) acc[i][d] *= alpha;
        }

        __syncthreads();  // all reads of K are done: P takes its place
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) Ps[(ty * TM + i) * LDP + tx + 16 * j] = s[i][j];
        cp_async_wait<0>();  // V has landed
        __syncthreads();

#pragma unroll 2
        for (int c = 0; c < FWD_BC; c += 4) {
            float4 pv[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i) pv[i] = *reinterpret_cast<const float4*>(Ps + (ty * TM + i) * LDP + c);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                float vv[DV];
                load_cols<D>(vv, Vs + (c + u) * LD, tx);
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float pu = u == 0 ? pv[i].x : u == 1 ? pv[i].y : u == 2 ? pv[i].z : pv[i].w;
#pragma unroll
                    for (int d = 0; d < DV; ++d) acc[i][d] = fmaf(pu, vv[d], acc[i][d]);
                }
            }
        }
    }

    // O = diag(l)⁻¹·O and lse = (m + log2 l)·ln 2; a row that saw no key gets O = 0 and lse = +∞
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        float li = l[i];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) li += __shfl_xor_sync(0xffffffff, li, off);
        const int row = r0 + ty * TM + i;
        if (row >= p.Sq) continue;
        store_cols<D>(p.o + (bh * p.Sq + row) * D, acc[i], tx, li > 0.0f ? 1.0f / li : 0.0f);
        if (tx == 0) p.lse[bh * p.Sq + row] = li > 0.0f ? (m[i] + log2f(li)) * kLn2 : INFINITY;
    }
}

template <int D>
void launch_forward(const FwdParams& p, int BH) {
    auto kernel = fwd_lse_kernel<D>;
    static const bool attr_set = [&] {  // dynamic shared memory above 48 KB must be allowed, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(FwdSmem<D>::BYTES)));
        return true;
    }();
    (void)attr_set;
    kernel<<<attn::grid_over_heads(unsigned((p.Sq + FWD_BR - 1) / FWD_BR), BH), FWD_THREADS, FwdSmem<D>::BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
}

// ------------------------------------------------------------------------------------------------
// The backward.
// ------------------------------------------------------------------------------------------------
struct BwdParams {
    const float *q, *k, *v, *dout, *lse, *delta;
    float *dq, *dk, *dv;
    int Sq, Sk;
    bool causal;
    float scale;       // 1/√D
    float scale_log2;  // log2(e)/√D
    long long BH;      // heads: the grid may hold a few more blocks (common/cuda/grid.cuh)
};

constexpr int BR = 64, BC = 64, THREADS = 256;  // 16 row groups × 16 lanes; 4 rows (and 4 keys or D/16 dims) a thread

// Shared memory of the key-tile kernel (and of the dQ kernel of the two-pass variant); SHARE_PS: P and dS in one buffer.
template <int D, bool SHARE_PS>
struct BwdSmem {
    static constexpr int LD = D + 4, LDP = BC + 4;
    static constexpr int K = 0, V = K + BC * LD, Q = V + BC * LD, G = Q + BR * LD, P = G + BR * LD,
                         S = SHARE_PS ? P : P + BR * LDP, LSE = S + BR * LDP, DELTA = LSE + BR, FLOATS = DELTA + BR;
    static constexpr size_t BYTES = size_t(FLOATS) * sizeof(float);
};

// D_i = Σ_d dO[i][d]·O[i][d], one warp a row; the same pass zeroes dQ when the key tiles add into it.
template <int D, bool ZERO_DQ>
__global__ void __launch_bounds__(256) delta_kernel(const float* o, const float* dout, float* delta, float* dq, size_t rows) {
    const size_t row = size_t(blockIdx.x) * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;  // the whole warp
    const float4* o4 = reinterpret_cast<const float4*>(o + row * D);
    const float4* g4 = reinterpret_cast<const float4*>(dout + row * D);
    float sum = 0.0f;
    for (int j = lane; j < D / 4; j += 32) {
        const float4 a = o4[j], b = g4[j];
        sum = fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, sum))));
        if constexpr (ZERO_DQ) reinterpret_cast<float4*>(dq + row * D)[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, off);
    if (lane == 0) delta[row] = sum;
}

// s[a][b] = Σ_d A[4ty+a][d]·B[tx+16b][d]   (A: BR rows, B: BC rows, both padded to D + 4)
template <int D>
__device__ __forceinline__ void dot_tiles(float (&s)[4][4], const float* A, const float* B, int ty, int tx) {
    constexpr int LD = D + 4;
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) s[a][b] = 0.0f;
#pragma unroll 4
    for (int d = 0; d < D; d += 4) {
        float4 av[4], bv[4];
#pragma unroll
        for (int a = 0; a < 4; ++a) av[a] = *reinterpret_cast<const float4*>(A + (4 * ty + a) * LD + d);
#pragma unroll
        for (int b = 0; b < 4; ++b) bv[b] = *reinterpret_cast<const float4*>(B + (tx + 16 * b) * LD + d);
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
            for (int b = 0; b < 4; ++b)
                s[a][b] = fmaf(av[a].x, bv[b].x, fmaf(av[a].y, bv[b].y, fmaf(av[a].z, bv[b].z, fmaf(av[a].w, bv[b].w, s[a][b]))));
    }
}

// acc[a][e] += Σ_r T[r][4ty+a]·X[r][col(tx,e)]   (T: [BR][BC+4], X: [BR][D+4]): dV += Pᵀ·dO, dK += dSᵀ·Q
template <int D>
__device__ __forceinline__ void add_transposed(float (&acc)[4][D / 16], const float* T, const float* X, int ty, int tx) {
    constexpr int LD = D + 4, LDP = BC + 4;
#pragma unroll 2
    for (int r = 0; r < BR; ++r) {
        const float4 t = *reinterpret_cast<const float4*>(T + r * LDP + 4 * ty);
        float x[D / 16];
        load_cols<D>(x, X + r * LD, tx);
#pragma unroll
        for (int e = 0; e < D / 16; ++e) {
            acc[0][e] = fmaf(t.x, x[e], acc[0][e]);
            acc[1][e] = fmaf(t.y, x[e], acc[1][e]);
            acc[2][e] = fmaf(t.z, x[e], acc[2][e]);
            acc[3][e] = fmaf(t.w, x[e], acc[3][e]);
        }
    }
}

// acc[a][e] += Σ_c S[4ty+a][c]·K[c][col(tx,e)]   (S: [BR][BC+4], K: [BC][D+4]): dQ += dS·K
template <int D>
__device__ __forceinline__ void add_rows(float (&acc)[4][D / 16], const float* S, const float* K, int ty, int tx) {
    constexpr int LD = D + 4, LDP = BC + 4;
#pragma unroll 2
    for (int c = 0; c < BC; c += 4) {
        float4 sv[4];
#pragma unroll
        for (int a = 0; a < 4; ++a) sv[a] = *reinterpret_cast<const float4*>(S + (4 * ty + a) * LDP + c);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            float x[D / 16];
            load_cols<D>(x, K + (c + u) * LD, tx);
#pragma unroll
            for (int a = 0; a < 4; ++a) {
                const float su = u == 0 ? sv[a].x : u == 1 ? sv[a].y : u == 2 ? sv[a].z : sv[a].w;
#pragma unroll
                for (int e = 0; e < D / 16; ++e) acc[a][e] = fmaf(su, x[e], acc[a][e]);
            }
        }
    }
}

// From the tile's scores s and dP: P = exp2(s·log2(e)/√D − lse·log2(e)), 0 where key ≥ Sk or (causal) key > row +
// Sk − Sq; dS = P∘(dP − D_i). On return s holds P and dp holds dS. lse2 = lse·log2(e) is +∞ for a row that sees no
// key and for rows past Sq, so that P = 0 there without a test; only tiles that cross the diagonal or the end of K
// need the mask.
__device__ __forceinline__ void probabilities(float (&s)[4][4], float (&dp)[4][4], const float* lse2, const float* delta,
                                              int r0, int c0, const BwdParams& p, int ty, int tx) {
    const int offset = p.Sk - p.Sq;
    const bool masked = c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > r0 + offset);
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        const int rr = 4 * ty + a, row = r0 + rr;
        const float l2 = lse2[rr], di = delta[rr];
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const int col = c0 + tx + 16 * b;
            float pr = exp2f(fmaf(s[a][b], p.scale_log2, -l2));
            if (masked && (col >= p.Sk || (p.causal && col > row + offset))) pr = 0.0f;
            s[a][b] = pr;
            dp[a][b] = pr * (dp[a][b] - di);
        }
    }
}

__device__ __forceinline__ void store_scores(float* T, const float (&x)[4][4], int ty, int tx) {
    constexpr int LDP = BC + 4;
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) T[(4 * ty + a) * LDP + tx + 16 * b] = x[a][b];
}

// The tile's lse (as lse·log2(e); +∞ past Sq) and D_i (0 past Sq) into shared memory.
__device__ __forceinline__ void load_row_terms(float* lse2, float* delta, const float* lse, const float* d, int r0, int Sq) {
    if (threadIdx.x < BR) {
        const int r = r0 + int(threadIdx.x);
        lse2[threadIdx.x] = r < Sq ? lse[r] * kLog2e : INFINITY;
        delta[threadIdx.x] = r < Sq ? d[r] : 0.0f;
    }
}

// One block per tile of BC keys of one (batch, head): dK_j and dV_j over every query tile that sees a key of it;
// DQ_ATOMIC: dQ_i += dS·K_j/√D by atomics (else the dQ kernel below computes dQ in a second pass). PREFETCH: the
// next Q_i and dO_i by cp.async during dK and dQ; VEC_RED: float4 atomics (sm_90); SHARE_PS: P and dS in one buffer.
template <int D, bool DQ_ATOMIC, bool PREFETCH, bool VEC_RED, bool SHARE_PS>
__global__ void __launch_bounds__(THREADS, 1) key_tile_kernel(BwdParams p) {
    using L = BwdSmem<D, SHARE_PS>;
    constexpr int DV = D / 16;
    extern __shared__ __align__(16) float smem[];
    float *Ks = smem + L::K, *Vs = smem + L::V, *Qs = smem + L::Q, *Gs = smem + L::G, *Ps = smem + L::P, *Ss = smem + L::S;
    float *lse2 = smem + L::LSE, *delta = smem + L::DELTA;

    const int c0 = int(blockIdx.x) * BC, tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long bh = attn::head_of_block();  // blockIdx.y, and z past 65535 heads
    if (bh >= p.BH) return;
    const float* q = p.q + bh * p.Sq * D;
    const float* g = p.dout + bh * p.Sq * D;
    const float* lse = p.lse + bh * p.Sq;
    const float* dlt = p.delta + bh * p.Sq;

    load_tile<D, BC, THREADS>(Ks, p.k + bh * p.Sk * D, c0, p.Sk);
    load_tile<D, BC, THREADS>(Vs, p.v + bh * p.Sk * D, c0, p.Sk);
    cp_async_commit();
    // causal: rows below c0 − (Sk − Sq) see no key of this tile
    const int r_begin = p.causal ? max(0, c0 - (p.Sk - p.Sq)) / BR * BR : 0;
    if (PREFETCH && r_begin < p.Sq) {
        load_tile<D, BR, THREADS>(Qs, q, r_begin, p.Sq);
        load_tile<D, BR, THREADS>(Gs, g, r_begin, p.Sq);
        cp_async_commit();
    }

    float dk[4][DV], dv[4][DV];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int e = 0; e < DV; ++e) dk[a][e] = 0.0f, dv[a][e] = 0.0f;

    for (int r0 = r_begin; r0 < p.Sq; r0 += BR) {
        if (!PREFETCH) {
            load_tile<D, BR, THREADS>(Qs, q, r0, p.Sq);
            load_tile<D, BR, THREADS>(Gs, g, r0, p.Sq);
            cp_async_commit();
        }
        load_row_terms(lse2, delta, lse, dlt, r0, p.Sq);
        cp_async_wait<0>();
        __syncthreads();

        float s[4][4], dp[4][4];
        dot_tiles<D>(s, Qs, Ks, ty, tx);   // S = Q_i·K_jᵀ
        dot_tiles<D>(dp, Gs, Vs, ty, tx);  // dP = dO_i·V_jᵀ
        probabilities(s, dp, lse2, delta, r0, c0, p, ty, tx);
        store_scores(Ps, s, ty, tx);
        if constexpr (!SHARE_PS) store_scores(Ss, dp, ty, tx);
        __syncthreads();
        add_transposed<D>(dv, Ps, Gs, ty, tx);  // dV_j += Pᵀ·dO_i
        if constexpr (SHARE_PS) {
            __syncthreads();  // every read of P is done: dS takes its place
            store_scores(Ss, dp, ty, tx);
            __syncthreads();
        }
        if constexpr (PREFETCH) {
            // dO_i's last use was dV: the next tile's dO can come in now (each thread waits for its own copies at the
            // loop's top, and the barrier there makes them visible)
            __syncthreads();
            if (r0 + BR < p.Sq) load_tile<D, BR, THREADS>(Gs, g, r0 + BR, p.Sq);
            cp_async_commit();
        }
        add_transposed<D>(dk, Ss, Qs, ty, tx);  // dK_j += dSᵀ·Q_i
        if constexpr (DQ_ATOMIC) {
            float dqa[4][DV];
#pragma unroll
            for (int a = 0; a < 4; ++a)
#pragma unroll
                for (int e = 0; e < DV; ++e) dqa[a][e] = 0.0f;
            add_rows<D>(dqa, Ss, Ks, ty, tx);  // dQ_i += dS·K_j/√D
#pragma unroll
            for (int a = 0; a < 4; ++a) {
                const int row = r0 + 4 * ty + a;
                if (row < p.Sq) atomic_add_cols<D, VEC_RED>(p.dq + (bh * p.Sq + row) * D, dqa[a], tx, p.scale);
            }
        }
        __syncthreads();  // every read of Q_i, P and dS is done
        if constexpr (PREFETCH) {
            if (r0 + BR < p.Sq) load_tile<D, BR, THREADS>(Qs, q, r0 + BR, p.Sq);
            cp_async_commit();
        }
    }
    cp_async_wait<0>();  // nothing left in flight when the block ends

#pragma unroll
    for (int a = 0; a < 4; ++a) {
        const int key = c0 + 4 * ty + a;
        if (key >= p.Sk) continue;
        store_cols<D>(p.dk + (bh * p.Sk + key) * D, dk[a], tx, p.scale);
        store_cols<D>(p.dv + (bh * p.Sk + key) * D, dv[a], tx, 1.0f);
    }
}

// The two-pass variant's second pass (the ladder measures it against atomics): one block per tile of BR query rows
// walks the key tiles, recomputes P and dS, and accumulates its dQ_i in registers.
template <int D>
__global__ void __launch_bounds__(THREADS, 1) dq_kernel(BwdParams p) {
    using L = BwdSmem<D, false>;
    constexpr int DV = D / 16;
    extern __shared__ __align__(16) float smem[];
    float *Ks = smem + L::K, *Vs = smem + L::V, *Qs = smem + L::Q, *Gs = smem + L::G, *Ss = smem + L::S;
    float *lse2 = smem + L::LSE, *delta = smem + L::DELTA;
    const int row_tiles = (p.Sq + BR - 1) / BR;
    const int r0 = (p.causal ? row_tiles - 1 - int(blockIdx.x) : int(blockIdx.x)) * BR;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long bh = attn::head_of_block();  // blockIdx.y, and z past 65535 heads
    if (bh >= p.BH) return;
    const float* k = p.k + bh * p.Sk * D;
    const float* v = p.v + bh * p.Sk * D;
    load_tile<D, BR, THREADS>(Qs, p.q + bh * p.Sq * D, r0, p.Sq);
    load_tile<D, BR, THREADS>(Gs, p.dout + bh * p.Sq * D, r0, p.Sq);
    cp_async_commit();
    load_row_terms(lse2, delta, p.lse + bh * p.Sq, p.delta + bh * p.Sq, r0, p.Sq);
    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? min(p.Sk, last_row + p.Sk - p.Sq + 1) : p.Sk;
    float dqa[4][DV];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int e = 0; e < DV; ++e) dqa[a][e] = 0.0f;
    for (int c0 = 0; c0 < kv_end; c0 += BC) {
        __syncthreads();  // the previous tile's K, V and dS are read
        load_tile<D, BC, THREADS>(Ks, k, c0, p.Sk);
        load_tile<D, BC, THREADS>(Vs, v, c0, p.Sk);
        cp_async_commit();
        cp_async_wait<0>();
        __syncthreads();
        float s[4][4], dp[4][4];
        dot_tiles<D>(s, Qs, Ks, ty, tx);
        dot_tiles<D>(dp, Gs, Vs, ty, tx);
        probabilities(s, dp, lse2, delta, r0, c0, p, ty, tx);
        store_scores(Ss, dp, ty, tx);
        __syncthreads();
        add_rows<D>(dqa, Ss, Ks, ty, tx);
    }
    cp_async_wait<0>();
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        const int row = r0 + 4 * ty + a;
        if (row < p.Sq) store_cols<D>(p.dq + (bh * p.Sq + row) * D, dqa[a], tx, p.scale);
    }
}

template <class Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// The passes of one backward: D_i (and dQ = 0), the key tiles, and dQ's second pass when it is not by atomics.
template <int D, bool DQ_ATOMIC, bool PREFETCH, bool VEC_RED, bool SHARE_PS>
void run_backward(const BwdParams& p, const float* o, float* delta, int BH) {
    const size_t rows = size_t(BH) * p.Sq;
    delta_kernel<D, DQ_ATOMIC><<<unsigned((rows + 7) / 8), 256>>>(o, p.dout, delta, p.dq, rows);
    CUDA_CHECK_LAUNCH();
    using L = BwdSmem<D, SHARE_PS>;
    auto key_kernel = key_tile_kernel<D, DQ_ATOMIC, PREFETCH, VEC_RED, SHARE_PS>;
    static const bool key_attr = (allow_smem(key_kernel, L::BYTES), true);
    (void)key_attr;
    key_kernel<<<attn::grid_over_heads(unsigned((p.Sk + BC - 1) / BC), BH), THREADS, L::BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
    if constexpr (!DQ_ATOMIC) {
        static const bool dq_attr = (allow_smem(dq_kernel<D>, BwdSmem<D, false>::BYTES), true);
        (void)dq_attr;
        dq_kernel<D><<<attn::grid_over_heads(unsigned((p.Sq + BR - 1) / BR), BH), THREADS, BwdSmem<D, false>::BYTES>>>(p);
        CUDA_CHECK_LAUNCH();
    }
}

int smem_per_block_optin() { return attn::cached_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(); }

// D ∈ {32, 64, 96, 128}, positive sizes (any B·H: the grid spreads heads over y and z), pointers set and 16-byte aligned
// (rows are read as float4s): otherwise std::invalid_argument naming the argument.
void validate(const char* fn, std::initializer_list<std::pair<const char*, const void*>> ptrs, int B, int H, int Sq, int Sk,
              int D) {
    if (D != 32 && D != 64 && D != 96 && D != 128)
        throw std::invalid_argument(std::string(fn) + ": head_dim " + std::to_string(D) + " is not supported (32, 64, 96 or 128)");
    for (const auto& [name, value] : {std::pair{"B", B}, std::pair{"H", H}, std::pair{"Sq", Sq}, std::pair{"Sk", Sk}})
        if (value <= 0)
            throw std::invalid_argument(std::string(fn) + ": " + name + " = " + std::to_string(value) + " (sizes must be positive)");
    for (const auto& [name, ptr] : ptrs) {
        if (!ptr) throw std::invalid_argument(std::string(fn) + ": " + name + " is a null pointer");
        if (reinterpret_cast<uintptr_t>(ptr) % 16)
            throw std::invalid_argument(std::string(fn) + ": " + name + " is not 16-byte aligned (rows are read as float4)");
    }
}

}  // namespace bwd_detail

// The backward with a choice of design (the ladder, task4_backward/ladder/ladder_backward.h, measures each): dQ by
// atomics or by a second pass, the next Q and dO prefetched or not, float4 or scalar atomics, P and dS apart or in
// one buffer. The reference is (true, true, true, false); the others are compiled for D = 128.
void flash_attention_backward_variant(bool dq_atomic, bool prefetch, bool vec_red, bool share_ps, const float* q,
                                      const float* k, const float* v, const float* o, const float* dout, const float* lse,
                                      float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
    using namespace bwd_detail;
    validate("flash_attention_backward",
             {{"q", q}, {"k", k}, {"v", v}, {"o", o}, {"dout", dout}, {"lse", lse}, {"dq", dq}, {"dk", dk}, {"dv", dv}}, B, H,
             Sq, Sk, D);
    const int BH = B * H;
    attn::StreamScratch delta(size_t(BH) * Sq);  // D_i (common/cuda/stream_scratch.h)
    const double scale = 1.0 / std::sqrt(double(D));
    const BwdParams p{q, k, v, dout, lse, delta.p, dq, dk, dv, Sq, Sk, causal, float(scale), float(1.4426950408889634 * scale), (long long)BH};
    const bool reference = dq_atomic && prefetch && vec_red;
    // 170 KB of shared memory at D = 128 with P and dS apart; a device with less (an A100: 163 KB) shares one buffer
    const bool share = share_ps || (D == 128 && size_t(smem_per_block_optin()) < BwdSmem<128, false>::BYTES);
    if (reference && !share) {
        switch (D) {
            case 32: return run_backward<32, true, true, true, false>(p, o, delta.p, BH);
            case 64: return run_backward<64, true, true, true, false>(p, o, delta.p, BH);
            case 96: return run_backward<96, true, true, true, false>(p, o, delta.p, BH);
            default: return run_backward<128, true, true, true, false>(p, o, delta.p, BH);
        }
    }
    if (reference && D == 128) return run_backward<128, true, true, true, true>(p, o, delta.p, BH);
    if (D != 128 || share) throw std::invalid_argument("flash_attention_backward_variant: the ladder's variants are compiled for D = 128");
    if (!dq_atomic) {
        return prefetch ? run_backward<128, false, true, false, false>(p, o, delta.p, BH)
                        : run_backward<128, false, false, false, false>(p, o, delta.p, BH);
    }
    if (!prefetch) {
        return vec_red ? run_backward<128, true, false, true, false>(p, o, delta.p, BH)
                       : run_backward<128, true, false, false, false>(p, o, delta.p, BH);
    }
    return run_backward<128, true, true, false, false>(p, o, delta.p, BH);
}
#else
// ------------------------------------------------------------------------------------------------
// Your kernels: the plan of task4/README.md ("Bonus: the backward pass"), FlashAttention-2's Algorithm 2.
//
// The forward with lse. Your Task 4 kernel, copied here (a kernel of this file), plus one number per row:
// TODO(task4c.2) when a row's sum l is final, write lse = m + log(l) (natural log; mind the base if your m is in
//     log2 units), and lse = +∞ for a row that saw no key (causal with Sq > Sk; its O is 0).
//
// The backward, in three passes on the default stream (P is recomputed from lse: nothing Sq × Sk is stored):
// TODO(task4c.4) the row term: D_i = Σ_d dO[i][d]·O[i][d] for every row (one warp a row, float4 loads, a shuffle
//     sum) into a scratch buffer of B·H·Sq floats; the same pass may write dQ = 0 (dQ is accumulated by atomics).
// TODO(task4c.5) the key-tile kernel: a block of 256 threads owns BC = 64 keys of one (batch, head) — blockIdx.x the
//     key tile, the head b·H + h = attn::head_of_block() (common/cuda/grid.cuh: gridDim.y stops at 65535); threads form 16 row groups of 16 lanes (ty = threadIdx.x / 16, tx = % 16).
//     Load K_j and V_j once (rows past Sk: zeros). Keep in registers dK[4][D/16] and dV[4][D/16] for keys 4ty … 4ty+3,
//     head dims 4tx … 4tx+3, 64+4tx … (tx, tx+16, … when D is 32 or 96). Walk the query tiles of BR = 64 rows (causal:
//     start at the tile holding row j0 − (Sk − Sq), the first row that sees key j0); per tile load Q_i and dO_i (rows
//     past Sq: zeros) and the tile's lse and D_i; __syncthreads(); then S = Q_i·K_jᵀ and dP = dO_i·V_jᵀ, each thread
//     4 rows (4ty …) × 4 keys (tx, tx+16, tx+32, tx+48), float4 reads along d.
// TODO(task4c.6) P = exp(S/√D − lse), 0 where masked (key ≥ Sk, or causal and key > row + Sk − Sq; a row past Sq or
//     with lse = +∞ gives exp(−∞) = 0 by itself); dS = P∘(dP − D_i). Write P and dS to shared memory ([64][64+4]
//     each); __syncthreads().
// TODO(task4c.7) dV_j += Pᵀ·dO_i and dK_j += dSᵀ·Q_i (for each of the 64 rows r: a float4 of P[r][4ty …] and the
//     thread's head dims of dO[r]), then dQ_i += dS·K_j/√D: the thread's 4 rows × D/16 dims, added to dQ in global
//     memory with atomicAdd (key tiles of the same rows run at the same time: a plain += loses updates).
//     __syncthreads() before the next tile overwrites Q_i, dO_i, P and dS.
// TODO(task4c.8) write dK_j/√D and dV_j for keys < Sk.
// Shared memory: K, V, Q, dO ([64][D+4] each), P and dS ([64][68] each), lse and D_i (64 each): 170 KB at D = 128 —
// one block per SM (cudaFuncSetAttribute first: above 48 KB it must be allowed).
template <int D>
__global__ void __launch_bounds__(128) forward_lse_kernel(const float* q, const float* k, const float* v, float* o,
                                                          float* lse, int Sq, int Sk, bool causal, float scale) {}
template <int D>
__global__ void __launch_bounds__(256) row_term_kernel(const float* o, const float* dout, float* delta, float* dq,
                                                       size_t rows) {}
template <int D>
__global__ void __launch_bounds__(256) key_tile_kernel(const float* q, const float* k, const float* v, const float* dout,
                                                       const float* lse, const float* delta, float* dq, float* dk,
                                                       float* dv, int Sq, int Sk, bool causal, float scale) {}
#endif

void flash_attention_forward_lse(const float* q, const float* k, const float* v, float* o, float* lse, int B, int H,
                                 int Sq, int Sk, int D, bool causal) {
#if SOLUTION
    using namespace bwd_detail;
    validate("flash_attention_forward_lse", {{"q", q}, {"k", k}, {"v", v}, {"o", o}, {"lse", lse}}, B, H, Sq, Sk, D);
    const FwdParams p{q, k, v, o, lse, Sq, Sk, causal, float(1.4426950408889634 / std::sqrt(double(D))), (long long)B * H};
    switch (D) {
        case 32: return launch_forward<32>(p, B * H);
        case 64: return launch_forward<64>(p, B * H);
        case 96: return launch_forward<96>(p, B * H);
        default: return launch_forward<128>(p, B * H);
    }
#else
    // TODO(task4c.1): validate (D ∈ {32, 64, 96, 128}; B, H, Sq, Sk positive; no null pointer — else throw
    // std::invalid_argument naming the argument), then launch your Task 4 kernel with lse (above) on a grid of
    // attn::grid_over_heads(ceil(Sq / 64), B·H) blocks (common/cuda/grid.cuh), then CUDA_CHECK_LAUNCH().
    (void)q, (void)k, (void)v, (void)o, (void)lse, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4c.1");
#endif
}

void flash_attention_backward(const float* q, const float* k, const float* v, const float* o, const float* dout,
                              const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D,
                              bool causal) {
#if SOLUTION
    flash_attention_backward_variant(true, true, true, false, q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal);
#else
    // TODO(task4c.3): validate as above (every pointer named), then on the default stream: a scratch buffer for D_i
    // (cudaMallocAsync(&p, bytes, 0) … cudaFreeAsync(p, 0): stream-ordered, no synchronisation), the row-term kernel
    // (it also zeroes dq), the key-tile kernel on a grid of attn::grid_over_heads(ceil(Sk / 64), B·H) blocks of 256 threads, and
    // CUDA_CHECK_LAUNCH() after each launch. Measure with `make bench-task4-backward`.
    (void)q, (void)k, (void)v, (void)o, (void)dout, (void)lse, (void)dq, (void)dk, (void)dv, (void)B, (void)H, (void)Sq,
        (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4c.3");
#endif
}

}  // namespace task4
