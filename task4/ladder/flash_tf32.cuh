// flash_tf32.cuh — Task 4's top fp32 rung (course staff material, not in the student kit): the fused
// FlashAttention forward on the tensor cores, as accurate as fp32 FMA, by error-compensated TF32 ("3xTF32").
//
// Why. The reference (task4/reference/flash_attention.cu) does every multiply-add of S = Q·Kᵀ and O += P·V on
// the FMA units: 39 TFLOP/s on an H100, 76 % of cuBLAS SGEMM, close to the ceiling of FMA work. The tensor
// cores are much faster, but they multiply TF32: 10 stored mantissa bits, not fp32's 23, so one TF32 product is
// off by up to ~2⁻¹¹ relative, thousands of times fp32's error. The trick CUTLASS calls 3xTF32 (its
// OpMultiplyAddFastF32, which PyTorch's fp32 memory-efficient attention uses) gets fp32 accuracy back: split
// every operand x into a TF32 "big" part and the residual ("small", x − big, itself a TF32 number),
//     x = x_big + x_small,  |x_small| < 2⁻¹⁰·|x|,
//     a·b ≈ a_big·b_big + a_big·b_small + a_small·b_big        (a_small·b_small, < 2⁻²⁰·|a·b|, is dropped)
// Three tensor-core MMAs per product, accumulated in fp32: each product is now right to ~2⁻²⁰ (fp32 FMA: 2⁻²⁴),
// and three MMAs still run far faster than the FMA units. Measured on an H100 (docs/perf.md, "Task 4's
// 3xTF32 rung"): 67 TFLOP/s at the course's B=64 S=4096 (1.71x the reference, 1.38x torch's memory-efficient
// SDPA), output within 1.5-2.0e-6 relative L2 of float64 (the reference: 0.3-1.2e-6), max |error| ≤ 4.3e-6,
// against Task 4's tolerance of 2e-5 + 1e-4·|want| per element.
//
// What. FlashAttention-2's forward with mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (the layout of the
// bf16 bonus, task4_bf16/reference/flash_attention_bf16.cu, with fp32 tiles). A block of WARPS warps owns
// BR = WARPS·MREP·16 query rows of one (batch, head); warp w owns rows w·MREP·16 … and keeps in registers
//   of[MREP][D/8][4]   its output rows as m16n8 accumulators (fp32)
//   sf, pf             the scores of the current key tile, then its probabilities P
//   m, l               running max (log2 units) and this thread's share of the running sum, per row it touches
// Per key tile of BC keys: S = Q·Kᵀ (Q's A fragments and K's B fragments by ldmatrix from padded fp32 rows,
// split into big and small in registers, three MMAs each), masks on edge tiles only, the online softmax in
// fp32 (ex2 on the SFU, the scale log2(e)/√D folded into one FFMA), then P·V. P's A fragments come straight
// from S's accumulators: the m16n8 accumulator layout (a thread holds keys 2t, 2t+1) is not TF32's A layout
// (keys t, t+4), so instead of shuffling P the keys of each 8-key block are renumbered — position t is key 2t,
// position t+4 is key 2t+1 — and V's B fragments are read in the same order (a sum does not care about the
// order of its terms). Shared memory rows are D + 4 floats, so every fragment read (ldmatrix's 8-row phases,
// V's scalar reads of rows 2t, 2t+1) covers all 32 banks.
// Loads are cp.async, in one of two pipelines:
//   STAGES = 2   K and V double-buffered: tile j+1 is in flight while tile j is computed
//   STAGES = 1   one buffer each (half the shared memory, so two blocks fit on an SM): V_j arrives while
//                S = Q·K_jᵀ is computed, K_{j+1} while the softmax and P·V_j are
// Warps whose rows are all above a causal tile's keys skip its arithmetic (they still load and synchronise).
//
// The split. big = x with its low 13 bits cleared (a TF32 number, rounded toward zero); small = x − big, exact
// in fp32, plus half a TF32 unit in the last place: the tensor core reads only a TF32 operand's top 19 bits,
// so that truncation rounds small to nearest. (CUTLASS's round_toward_zero big and round_half_ulp_truncate
// small, the defaults of its FastF32. ptxas knows the tensor core ignores those bits: it drops the big part's
// mask and feeds x itself, so the big part costs nothing and the small part three instructions.)
//
// The accumulation. The tensor core adds to its fp32 accumulator with truncation, not round-to-nearest, so
// every MMA into an accumulator shrinks it by up to an ulp, always the same way. O accumulated over all keys in
// the MMAs' accumulators (3 MMAs per 8 keys: 1536 at S = 4096) measured 3.0e-5 relative L2 against float64 at
// S = 4096, 25x the FFMA reference; so each tile's P·V goes to a fresh accumulator (12 or 24 MMAs) and is added
// to O with an fp32 FADD, which rounds to nearest: 1.8e-6. That accumulator is taken NCH head-dim blocks at a
// time, so it costs 4·MREP·NCH registers, not a second copy of O. (S's 3·D/8 MMAs per score are left as they are.)
//
// Build and run (staff):  make ladder-task4 IMPL=reference   (build/reference/bin/ladder_task4 --top: checks,
//                         accuracy against float64, timings)
// As a submission:        task4/ladder/submission_tf32.cu (TASK4_SRC=… builds the tests, the runner or the bridge on it).
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "task4/ladder/flash_ladder.cuh"  // check_args

namespace task4_ladder {
namespace tf32 {

struct Params {
    const float *q, *k, *v;
    float* o;
    int Sq, Sk;
    bool causal;
    float scale_log2;  // log2(e)/√D: exp(x/√D) = exp2(x · scale_log2)
};

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void cp_async16(float* smem_dst, const float* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Four 8 × 4 fp32 matrices (ldmatrix counts 8 × 8 b16 = 8 rows of 16 bytes): lanes 8i … 8i+7 give the row
// addresses of matrix i; lane l receives element (row l/4, column l%4) of each, in r0 … r3.
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// c += a·b, m16n8k8: a 16 × 8 row-major, b 8 × 8 column-major, TF32 operands, fp32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // TF32 tensor cores need sm_80; the host side refuses older GPUs before launching
#endif
}

// 2^x by the SFU (MUFU.EX2, ~2 ulp, as exp2f's own), without exp2f's fix-up of results below 2^-126: those are
// probabilities under 1e-38 of the row's largest, flushed to 0.
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// x = big + small (see the file's header).
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
    big = __float_as_uint(x) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big)) + 0x1000u;
}
__device__ __forceinline__ void split(unsigned x, unsigned& big, unsigned& small) { split(__uint_as_float(x), big, small); }

// c += a·b to fp32 accuracy: the two small products first, then the big one.
__device__ __forceinline__ void mma_3xtf32(float (&c)[4], const unsigned (&a_big)[4], const unsigned (&a_small)[4],
                                           unsigned b0_big, unsigned b1_big, unsigned b0_small, unsigned b1_small) {
    mma_tf32(c, a_small, b0_big, b1_big);
    mma_tf32(c, a_big, b0_small, b1_small);
    mma_tf32(c, a_big, b0_big, b1_big);
}

template <int D, int WARPS, int MREP, int BC, int STAGES>
struct Config {
    static constexpr int RW = 16 * MREP, BR = RW * WARPS, THREADS = 32 * WARPS, LD = D + 4;
    static constexpr size_t SMEM_BYTES = size_t(BR + 2 * STAGES * BC) * LD * sizeof(float);
    static_assert(D % 32 == 0 && BC % 16 == 0 && (STAGES == 1 || STAGES == 2), "illegal tile");
};

// ROWS rows of a [len, D] matrix from row0 into a tile of row stride LD, by cp.async; zeros past len.
template <int D, int ROWS, int THREADS, int LD>
__device__ __forceinline__ void load_rows(float* tile, const float* src, int row0, int len) {
    constexpr int CPR = D / 4;  // 16-byte chunks per row
    if constexpr (THREADS % CPR == 0 && ROWS % (THREADS / CPR) == 0) {
        // each thread copies the same chunk of rows r, r + STEP, …: one base address plus constants
        constexpr int STEP = THREADS / CPR;
        const int r = threadIdx.x / CPR, col = (threadIdx.x % CPR) * 4;
        float* dst = tile + r * LD + col;
        if (row0 + ROWS <= len) {
            const float* s = src + size_t(row0 + r) * D + col;
#pragma unroll
            for (int i = 0; i < ROWS / STEP; ++i) cp_async16(dst + i * STEP * LD, s + size_t(i) * STEP * D, true);
        } else {
#pragma unroll
            for (int i = 0; i < ROWS / STEP; ++i) {
                const int row = row0 + r + i * STEP;
                const bool valid = row < len;
                cp_async16(dst + i * STEP * LD, src + size_t(valid ? row : 0) * D + col, valid);
            }
        }
    } else {
#pragma unroll 1
        for (int c = threadIdx.x; c < ROWS * CPR; c += THREADS) {
            const int r = c / CPR, col = (c % CPR) * 4;
            const bool valid = row0 + r < len;
            cp_async16(tile + r * LD + col, src + size_t(valid ? row0 + r : 0) * D + col, valid);
        }
    }
}

template <int D, int WARPS, int MREP, int BC, int STAGES>
__global__ void __launch_bounds__(WARPS * 32) flash_tf32_kernel(Params p) {
    using C = Config<D, WARPS, MREP, BC, STAGES>;
    constexpr int RW = C::RW, BR = C::BR, THREADS = C::THREADS, LD = C::LD;
    constexpr int KSTEPS = D / 8, NB = BC / 8, DN = D / 8, NCH = 2;  // NCH: head-dim blocks per P·V accumulator
    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;                   // [BR][LD]
    float* Ks = Qs + BR * LD;           // STAGES × [BC][LD]
    float* Vs = Ks + STAGES * BC * LD;  // STAGES × [BC][LD]

    const int row_blocks = gridDim.y;
    const int rb = p.causal ? row_blocks - 1 - int(blockIdx.y) : int(blockIdx.y);  // causal: longest rows first
    const int r0 = rb * BR;
    const size_t bh = blockIdx.x;
    const float* q = p.q + bh * p.Sq * D;
    const float* k = p.k + bh * p.Sk * D;
    const float* v = p.v + bh * p.Sk * D;
    float* o = p.o + bh * p.Sq * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int offset = p.Sk - p.Sq;  // causal: key j visible to query i iff j ≤ i + offset

    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? max(0, min(p.Sk, last_row + offset + 1)) : p.Sk;
    const int n_tiles = (kv_end + BC - 1) / BC;
    const int w0 = r0 + warp * RW;  // this warp's first row
    const int w_last_key = p.causal ? min(w0 + RW - 1, p.Sq - 1) + offset : p.Sk - 1;  // the last key it can see
    const bool w_active = w0 < p.Sq;

    // ldmatrix row addresses. Q's A fragments of M-tile mr, k-step kk: matrices (rows 0–7, cols 0–3), (rows 8–15,
    // cols 0–3), (rows 0–7, cols 4–7), (rows 8–15, cols 4–7) = a0 … a3. K's B fragments of n-blocks 2nb, 2nb+1:
    // matrices (keys 0–7, cols 0–3), (keys 0–7, cols 4–7), (keys 8–15, cols 0–3), (keys 8–15, cols 4–7).
    const unsigned q_base = smem_u32(Qs + (warp * RW + lane % 8 + ((lane / 8) % 2) * 8) * LD + (lane / 16) * 4);
    const unsigned k_base = smem_u32(Ks + (lane % 8 + (lane / 16) * 8) * LD + ((lane / 8) % 2) * 4);

    // ---- loads: Q and the first tile. Groups of cp.async, in order: Q, K_0 (+ V_0 when double-buffered), V_0
    // (single buffers), then per tile K_{j+1} and V_{j+1} (one group each, or one together).
    load_rows<D, BR, THREADS, LD>(Qs, q, r0, p.Sq);
    cp_async_commit();
    if (n_tiles > 0) {
        load_rows<D, BC, THREADS, LD>(Ks, k, 0, p.Sk);
        if constexpr (STAGES == 2) load_rows<D, BC, THREADS, LD>(Vs, v, 0, p.Sk);
    }
    cp_async_commit();
    if constexpr (STAGES == 1) {
        if (n_tiles > 0) load_rows<D, BC, THREADS, LD>(Vs, v, 0, p.Sk);
        cp_async_commit();
    }

    float of[MREP][DN][4];
    float m[MREP][2], l[MREP][2];
#pragma unroll
    for (int mr = 0; mr < MREP; ++mr) {
        m[mr][0] = m[mr][1] = -INFINITY, l[mr][0] = l[mr][1] = 0.f;
#pragma unroll
        for (int n = 0; n < DN; ++n) of[mr][n][0] = of[mr][n][1] = of[mr][n][2] = of[mr][n][3] = 0.f;
    }

    for (int j = 0; j < n_tiles; ++j) {
        const int c0 = j * BC;
        int stage = 0;
        if constexpr (STAGES == 2) {
            stage = j & 1;
            if (j + 1 < n_tiles) {
                load_rows<D, BC, THREADS, LD>(Ks + (stage ^ 1) * BC * LD, k, c0 + BC, p.Sk);
                load_rows<D, BC, THREADS, LD>(Vs + (stage ^ 1) * BC * LD, v, c0 + BC, p.Sk);
                cp_async_commit();
                cp_async_wait<1>();  // tile j has landed; tile j+1 may still be in flight
            } else {
                cp_async_wait<0>();
            }
        } else {
            cp_async_wait<1>();  // Q and K_j have landed; V_j may still be in flight
        }
        __syncthreads();
        const unsigned k_tile = k_base + unsigned(stage * BC * LD * 4);
        const float* Vt = Vs + stage * BC * LD;
        const bool work = w_active && c0 <= w_last_key;  // warp-uniform: a tile wholly masked for this warp is skipped

        // ---- S = Q·Kᵀ, 8 head dims (one k-step) at a time; Q's fragments split once per k-step, K's once per
        // n-block pair, each product three MMAs
        float sf[MREP][NB][4];
        if (work) {
#pragma unroll
            for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                for (int n = 0; n < NB; ++n) sf[mr][n][0] = sf[mr][n][1] = sf[mr][n][2] = sf[mr][n][3] = 0.f;
#pragma unroll 2
            for (int kk = 0; kk < KSTEPS; ++kk) {
                unsigned qb[MREP][4], qs[MREP][4];
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr) {
                    unsigned a[4];
                    ldmatrix_x4(q_base + unsigned((mr * 16 * LD + kk * 8) * 4), a[0], a[1], a[2], a[3]);
#pragma unroll
                    for (int e = 0; e < 4; ++e) split(a[e], qb[mr][e], qs[mr][e]);
                }
#pragma unroll
                for (int nb = 0; nb < BC / 16; ++nb) {
                    unsigned b[4], kb[4], ks[4];
                    ldmatrix_x4(k_tile + unsigned((nb * 16 * LD + kk * 8) * 4), b[0], b[1], b[2], b[3]);
#pragma unroll
                    for (int e = 0; e < 4; ++e) split(b[e], kb[e], ks[e]);
#pragma unroll
                    for (int mr = 0; mr < MREP; ++mr) {
                        mma_3xtf32(sf[mr][2 * nb], qb[mr], qs[mr], kb[0], kb[1], ks[0], ks[1]);
                        mma_3xtf32(sf[mr][2 * nb + 1], qb[mr], qs[mr], kb[2], kb[3], ks[2], ks[3]);
                    }
                }
            }
        }
        if constexpr (STAGES == 1) {
            __syncthreads();  // every warp is done with K_j: K_{j+1} takes its place during the softmax and P·V
            if (j + 1 < n_tiles) load_rows<D, BC, THREADS, LD>(Ks, k, c0 + BC, p.Sk);
            cp_async_commit();
        }

        // ---- masks (only where the tile crosses the end of K or this warp's causal diagonal), online softmax.
        // P is written in the order of P·V's A fragment (see below): pf[..][n] = (c0, c2, c1, c3) of sf[..][n], so
        // that the exponentials land in the registers the MMA reads (ptxas then drops the big part's mask too:
        // the tensor core ignores those bits anyway) instead of being copied into place for every MMA.
        float pf[MREP][NB][4];
        if (work) {
            const bool edge = c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > w0 + offset);
            if (edge) {
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                    for (int n = 0; n < NB; ++n)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            const int key = c0 + 8 * n + 2 * t + (e & 1), row = w0 + 16 * mr + g + (e >> 1) * 8;
                            if (key >= p.Sk || (p.causal && key > row + offset)) sf[mr][n][e] = -INFINITY;
                        }
            }
            // per M-tile mr and row h (0: g, 1: g + 8), in log2 units; a row's 8 keys of an n-block are spread
            // over the 4 lanes of a quad
#pragma unroll
            for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    float mx = -INFINITY;
#pragma unroll
                    for (int n = 0; n < NB; ++n) mx = fmaxf(mx, fmaxf(sf[mr][n][2 * h], sf[mr][n][2 * h + 1]));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                    const float m_new = fmaxf(m[mr][h], mx * p.scale_log2);
                    const float m_use = m_new == -INFINITY ? 0.f : m_new;  // a row with nothing visible yet
                    const float alpha = ex2(m[mr][h] - m_use);
                    m[mr][h] = m_new;
                    float sum = 0.f;
#pragma unroll
                    for (int n = 0; n < NB; ++n) {
                        pf[mr][n][h] = ex2(fmaf(sf[mr][n][2 * h], p.scale_log2, -m_use));
                        pf[mr][n][2 + h] = ex2(fmaf(sf[mr][n][2 * h + 1], p.scale_log2, -m_use));
                        sum += pf[mr][n][h] + pf[mr][n][2 + h];
                    }
                    l[mr][h] = l[mr][h] * alpha + sum;
#pragma unroll
                    for (int n = 0; n < DN; ++n) of[mr][n][2 * h] *= alpha, of[mr][n][2 * h + 1] *= alpha;
                }
        }
        if constexpr (STAGES == 1) {
            cp_async_wait<1>();  // V_j has landed; K_{j+1} may still be in flight
            __syncthreads();
        }

        // ---- O += P·V: this tile's into a fresh accumulator, NCH head-dim blocks at a time, then added to O in fp32
        // (see "The accumulation" above). P's A fragment of keys 8kb … 8kb+7 is S's accumulators of n-block kb with the
        // keys renumbered (position t = key 2t, position t+4 = key 2t+1): (c0, c2, c1, c3), as pf holds them; V's B
        // fragment of head-dim block n is read in the same order: V[8kb + 2t][8n + g], V[8kb + 2t+1][8n + g].
        if (work) {
            unsigned pb[MREP][NB][4], ps[MREP][NB][4];
#pragma unroll
            for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                for (int kb = 0; kb < NB; ++kb)
#pragma unroll
                    for (int e = 0; e < 4; ++e) split(pf[mr][kb][e], pb[mr][kb][e], ps[mr][kb][e]);
#pragma unroll
            for (int c = 0; c < DN; c += NCH) {
                float acc[MREP][NCH][4];
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                    for (int n = 0; n < NCH; ++n) acc[mr][n][0] = acc[mr][n][1] = acc[mr][n][2] = acc[mr][n][3] = 0.f;
#pragma unroll
                for (int kb = 0; kb < NB; ++kb) {
                    const float* vrow = Vt + (kb * 8 + 2 * t) * LD + c * 8 + g;
#pragma unroll
                    for (int n = 0; n < NCH; ++n) {
                        unsigned vb0, vs0, vb1, vs1;
                        split(vrow[n * 8], vb0, vs0);
                        split(vrow[LD + n * 8], vb1, vs1);
#pragma unroll
                        for (int mr = 0; mr < MREP; ++mr) mma_3xtf32(acc[mr][n], pb[mr][kb], ps[mr][kb], vb0, vb1, vs0, vs1);
                    }
                }
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                    for (int n = 0; n < NCH; ++n)
#pragma unroll
                        for (int e = 0; e < 4; ++e) of[mr][c + n][e] += acc[mr][n][e];
            }
        }
        __syncthreads();  // every warp is done with this tile's buffers before they are refilled
        if constexpr (STAGES == 1) {
            if (j + 1 < n_tiles) load_rows<D, BC, THREADS, LD>(Vs, v, c0 + BC, p.Sk);
            cp_async_commit();
        }
    }

    cp_async_wait<0>();  // nothing in flight when the block ends (Q's copy, when no key tile was loaded)

    // ---- O / l (l summed over the quad's 4 lanes; a row that saw no key gets zeros), 8 bytes a lane
#pragma unroll
    for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float sum = l[mr][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const float inv = sum > 0.f ? 1.f / sum : 0.f;
            const int row = w0 + 16 * mr + g + 8 * h;
            if (row < p.Sq) {
                float* orow = o + size_t(row) * D + 2 * t;
#pragma unroll
                for (int n = 0; n < DN; ++n)
                    *reinterpret_cast<float2*>(orow + 8 * n) = make_float2(of[mr][n][2 * h] * inv, of[mr][n][2 * h + 1] * inv);
            }
        }
}

// ------------------------------------------------------------------------------------------------
// Launchers with Task 4's interface.
// ------------------------------------------------------------------------------------------------
inline void require_tensor_cores() {
    const int major = attn::cached_device_attribute<cudaDevAttrComputeCapabilityMajor>();
    if (major < 8)
        throw std::runtime_error("flash_attention_forward (3xTF32): this GPU (sm_" + std::to_string(major) +
                                 "x) has no TF32 tensor cores (mma.sync m16n8k8 tf32 needs sm_80 or newer)");
}

template <int D, int WARPS, int MREP, int BC, int STAGES>
void launch(const float* q, const float* k, const float* v, float* o, int BH, int Sq, int Sk, bool causal) {
    using C = Config<D, WARPS, MREP, BC, STAGES>;
    auto kernel = flash_tf32_kernel<D, WARPS, MREP, BC, STAGES>;
    static const bool attr_set = [&] {  // dynamic shared memory above 48 KB must be allowed, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::SMEM_BYTES)));
        return true;
    }();
    (void)attr_set;
    const Params p{q, k, v, o, Sq, Sk, causal, float(1.4426950408889634 / std::sqrt(double(D)))};
    kernel<<<dim3(unsigned(BH), unsigned((Sq + C::BR - 1) / C::BR)), C::THREADS, C::SMEM_BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
}

// One tile configuration at every head_dim.
template <int WARPS, int MREP, int BC, int STAGES>
void forward_config(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk, int D,
                    bool causal) {
    check_args(D, Sk);
    if (B * H == 0 || Sq == 0) return;
    require_tensor_cores();
    switch (D) {
        case 32: launch<32, WARPS, MREP, BC, STAGES>(q, k, v, o, B * H, Sq, Sk, causal); break;
        case 64: launch<64, WARPS, MREP, BC, STAGES>(q, k, v, o, B * H, Sq, Sk, causal); break;
        case 96: launch<96, WARPS, MREP, BC, STAGES>(q, k, v, o, B * H, Sq, Sk, causal); break;
        default: launch<128, WARPS, MREP, BC, STAGES>(q, k, v, o, B * H, Sq, Sk, causal); break;
    }
}

// The top rung: the tile configuration measured fastest per shape (task4/README.md's ladder, docs/perf.md, H100):
// 8 warps × 32 rows with double-buffered 32-key tiles, or for short queries (Sq ≤ 256, where 256-row blocks would be
// mostly empty and too few) 4 warps × 16 rows, 64-key tiles, one buffer each.
inline void forward_tf32(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk, int D,
                         bool causal) {
    if (Sq <= 256)
        forward_config<4, 1, 64, 1>(q, k, v, o, B, H, Sq, Sk, D, causal);
    else
        forward_config<8, 2, 32, 2>(q, k, v, o, B, H, Sq, Sk, D, causal);
}

}  // namespace tf32
}  // namespace task4_ladder
