// flash_backward_tf32.cuh — the top rung of Task 4's backward ladder (course staff material, not in the student kit):
// FlashAttention-2's backward pass (task4_backward/task4_backward.h) on the TF32 tensor cores, as accurate as fp32 FMA, by
// error-compensated TF32 ("3xTF32").
//
// Why. The reference (task4_backward/reference/flash_attention_backward.cu) does the backward's five products on the FMA units:
// 34.5 TFLOP/s on an H100 at B=64 H=32 S=4096 D=128, close to the ceiling of FMA work (cuBLAS SGEMM: 51), and behind
// torch's fp32 SDPA backends there — the math backend, which stores P and runs four GEMMs at cuBLAS speed (44 per
// head), and the memory-efficient one (37), which runs on the tensor cores. Task 4's forward rung
// (task4/ladder/flash_tf32.cuh, its header explains the method) showed how to use the tensor cores without losing
// fp32's accuracy: split every operand x into a TF32 "big" part and the residual,
//     x = x_big + x_small,   a·b ≈ a_big·b_big + a_big·b_small + a_small·b_big,
// three mma.sync.m16n8k8 per product. The backward is five such products per pair of tiles, so it gains the same way.
// Measured on an H100 (docs/perf.md, "4c on the tensor cores"): 848 ms = 51.9 TFLOP/s at B=64 H=32 S=4096 D=128, 1.50x
// the reference, 1.40x torch's memory-efficient backward, 1.16x its math backward per head; 1.25-1.52x the reference
// at every shape and head_dim measured; dQ, dK, dV within 0.6-1.4e-6 relative L2 of float64 (the reference: 0.2-1.3e-6),
// at most 16 % of the 4c tests' tolerance (2e-5 + 1e-4·|want|) on 22 ragged shapes and the timed ones.
//
// What. Algorithm 2 of the FA2 paper, as the reference does it: a small kernel computes the row term
// D_i = rowsum(dO ∘ O) and zeroes dQ; then one block of 8 warps per tile of BC = 64 keys of one (batch, head) keeps
// K_j and V_j in shared memory, walks the query tiles of BR = 64 rows that see any of its keys, and per query tile
//   S  = Q_i·K_jᵀ,  dP = dO_i·V_jᵀ       warp w: rows 16(w%4) … +15 × keys 32(w/4) … +31 (two m16n8 grids, by ldmatrix)
//   P  = exp(S/√D − lse),  dS = P∘(dP − D_i)            in those registers; P and dS to shared memory
//   dV_j += Pᵀ·dO_i,  dK_j += dSᵀ·Q_i   warp w: keys 32(w%2) … +31 × head dims D/4·(w/2) …   (registers, all tiles)
//   dQ_i += dS·K_j/√D                    warp w: rows 32(w%2) … +31 × head dims D/4·(w/2) …   (atomics to global memory)
// Nothing of size Sq × Sk is stored: P and dS live for one tile.
//
// The layouts. An m16n8k8 TF32 MMA takes A (16 × 8) with lane (g, t) = (lane/4, lane%4) holding A[g][t], A[g+8][t],
// A[g][t+4], A[g+8][t+4], and B (8 × 8) as B[t][g], B[t+4][g]. S and dP read Q, dO (A) and K, V (B, as Kᵀ) along the
// head dimension: ldmatrix serves both, from rows padded to D + 4 floats (8 rows of a phase fall in 8 different bank
// quads). The other three products run along rows or keys (k = query row for dV and dK, k = key for dQ), so their
// B operands (dO, Q, K) are read down a column: B[t][g] = X[row t][dim g]. Rows t and t+4 of a D + 4 padded tile hit
// the same banks; rows 2t and 2t+1 do not (bank 8t + g). So the k index of those MMAs is renumbered — position t is
// row 2t, position t+4 is row 2t+1 (a sum does not care about the order of its terms) — and the A operand is read in
// the same order: A[g][t], A[g][t+4] = two neighbours, one 8-byte load from P or dS stored with rows of 72 floats
// (8g + 2t: conflict-free). P and dS go to shared memory transposed (Pᵀ, dSᵀ: [key][row]) for dV and dK, and dS
// once more as it is ([row][key]) for dQ: 55 KB beside K, V, Q and dO, 187 KB in all at D = 128 (one block per SM).
//
// The accumulation. The tensor core adds to its fp32 accumulator with truncation; the forward rung measured 25× the
// error when O was accumulated over all keys inside the MMAs. So dV, dK and dQ take each tile's product in a fresh
// accumulator (k = 64: 24 MMAs) and add it with an fp32 FADD (dV, dK: in registers across the query tiles; dQ: by a
// float4 atomic add across the key tiles, after a lane-pair shuffle). S and dP, which sum over D, do the same per 32
// head dims (12 MMAs an accumulator, CHUNKS): summed over all of D inside the MMAs (48 at D = 128, as the forward's S
// is), the gradients measured 2.7-3.4e-6 relative L2 and up to 61 % of the tolerance (B=4 H=16 S=1024 causal), where
// dS = P∘(dP − D_i) cancels for rows that see few keys (P near 1, dP near D_i) and dP's error is all that is left;
// per 32 dims, 0.6-1.4e-6 and 16 %, for 1-3 % of the time. backward<false> keeps the first version for the benchmark.
//
// Loads are cp.async: K_j and V_j once; the next Q_i, dO_i, lse and D_i while dQ of this tile is computed (their last
// readers, S, dP and dV, dK, are done by then). Every head dim (32, 64, 96, 128) takes this path; on a GPU whose
// shared memory per block is smaller than the layout (an A100 at D = 128: 187 KB against 163 KB) the launcher calls
// the fallback it is given (the FFMA reference).
//
// Build and run (staff):  make ladder-task4-backward-tf32 IMPL=reference   (build/reference/bin/ladder_task4_backward_tf32:
//                         ragged checks, accuracy against float64, timings beside the FFMA reference; a GPU)
// As a 4c submission:     task4_backward/ladder/submission_backward_tf32.cu (TASK4_BACKWARD_SRC=…, see its header).
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/cuda/cuda_check.h"
#include "common/cuda/stream_scratch.h"

namespace task4_ladder {
namespace bwd_tf32 {

constexpr int BR = 64, BC = 64, WARPS = 8, THREADS = 32 * WARPS;
constexpr float kLog2e = 1.4426950408889634f;

struct Params {
    const float *q, *k, *v, *dout, *lse, *delta;
    float *dq, *dk, *dv;
    int Sq, Sk;
    bool causal;
    float scale;       // 1/√D
    float scale_log2;  // log2(e)/√D: exp(x/√D) = exp2(x · scale_log2)
};

template <int D>
struct Smem {
    static constexpr int LD = D + 4;  // K, V, Q, dO rows (≡ 4 mod 32 floats)
    static constexpr int LDT = 72;    // Pᵀ, dSᵀ [BC][LDT] and dS [BR][LDT] (≡ 8 mod 32: 8-byte reads at 8g + 2t)
    static constexpr int K = 0, V = K + BC * LD, Q = V + BC * LD, G = Q + BR * LD, PT = G + BR * LD, DST = PT + BC * LDT,
                         DSR = DST + BC * LDT, LSE = DSR + BR * LDT, DELTA = LSE + BR, FLOATS = DELTA + BR;
    static constexpr size_t BYTES = size_t(FLOATS) * sizeof(float);
    static_assert(D % 32 == 0, "head_dim: a multiple of 32 (four warps share its columns, 8 a block)");
};

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void cp_async16(float* smem_dst, const float* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async4(float* smem_dst, const float* src, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(src), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// Four 8 × 4 fp32 matrices (ldmatrix counts 8 × 8 b16): lanes 8i … 8i+7 give the row addresses of matrix i; lane l
// receives element (row l/4, column l%4) of each.
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// c += a·b, m16n8k8, TF32 operands, fp32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // TF32 tensor cores need sm_80; the host side never launches this kernel on older GPUs
#endif
}

__device__ __forceinline__ float ex2(float x) {  // 2^x on the SFU (~2 ulp); exp2(−∞) = 0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// x = big + small: big keeps TF32's 10 mantissa bits (the low 13 cleared), small = x − big, exact, plus half a TF32
// unit in its last place so that the tensor core's truncation of small rounds to nearest (flash_tf32.cuh's header).
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
    big = __float_as_uint(x) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big)) + 0x1000u;
}

struct Frag {  // an A fragment, split
    unsigned big[4], small[4];
};
__device__ __forceinline__ void split4(const unsigned (&x)[4], Frag& f) {
#pragma unroll
    for (int e = 0; e < 4; ++e) split(__uint_as_float(x[e]), f.big[e], f.small[e]);
}
// c += a·b to fp32 accuracy: the two small products first, then the big one.
__device__ __forceinline__ void mma3(float (&c)[4], const Frag& a, unsigned b0_big, unsigned b1_big, unsigned b0_small,
                                     unsigned b1_small) {
    mma_tf32(c, a.small, b0_big, b1_big);
    mma_tf32(c, a.big, b0_small, b1_small);
    mma_tf32(c, a.big, b0_big, b1_big);
}

// ROWS rows of a [len, D] matrix from row0 into a tile of row stride D + 4, by cp.async; zeros past len.
template <int D, int ROWS>
__device__ __forceinline__ void load_rows(float* tile, const float* src, int row0, int len) {
    constexpr int CPR = D / 4, LD = D + 4;  // 16-byte chunks per row
#pragma unroll 4
    for (int c = threadIdx.x; c < ROWS * CPR; c += THREADS) {
        const int r = c / CPR, col = (c % CPR) * 4;
        const bool valid = row0 + r < len;
        cp_async16(tile + r * LD + col, src + size_t(valid ? row0 + r : 0) * D + col, valid);
    }
}

// The query tile's lse and D_i (0 past Sq: those rows are masked).
__device__ __forceinline__ void load_row_terms(float* lse_s, float* delta_s, const float* lse, const float* delta, int r0,
                                               int Sq) {
    const int i = threadIdx.x % BR, r = r0 + i;
    const bool valid = r < Sq;
    if (threadIdx.x < BR) cp_async4(lse_s + i, lse + (valid ? r : 0), valid);
    else if (threadIdx.x < 2 * BR) cp_async4(delta_s + i, delta + (valid ? r : 0), valid);
}

// out = T·X over 64 values of k, this warp's 32 × D/4 share, in accumulators that start at zero (the caller adds them
// to its fp32 sums: "The accumulation" above). T is Pᵀ or dSᵀ ([BC][LDT], A: the warp's 32 keys from m0) and X is dO
// or Q ([BR][D+4], B: the warp's head dims from d0), k = the tile's rows; or T = dS ([BR][LDT], the warp's 32 rows) and
// X = K ([BC][D+4]), k = the tile's keys (dQ). k position t is row 2t of X, position t+4 is row 2t+1.
template <int D>
__device__ __forceinline__ void tile_product(float (&out)[2][D / 32][4], const float* T, const float* X, int m0, int d0,
                                             int g, int t) {
    constexpr int LD = D + 4, LDT = Smem<D>::LDT, ND = D / 32;
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int n = 0; n < ND; ++n) out[m][n][0] = out[m][n][1] = out[m][n][2] = out[m][n][3] = 0.f;
#pragma unroll 2
    for (int kb = 0; kb < 8; ++kb) {  // k = 8kb … 8kb+7
        Frag a[2];
#pragma unroll
        for (int m = 0; m < 2; ++m) {
            const float* row = T + (m0 + 16 * m + g) * LDT + 8 * kb + 2 * t;
            const float2 lo = *reinterpret_cast<const float2*>(row);            // A[g][t], A[g][t+4]
            const float2 hi = *reinterpret_cast<const float2*>(row + 8 * LDT);  // A[g+8][t], A[g+8][t+4]
            split(lo.x, a[m].big[0], a[m].small[0]);
            split(hi.x, a[m].big[1], a[m].small[1]);
            split(lo.y, a[m].big[2], a[m].small[2]);
            split(hi.y, a[m].big[3], a[m].small[3]);
        }
        const float* xrow = X + (8 * kb + 2 * t) * LD + d0 + g;
#pragma unroll
        for (int n = 0; n < ND; ++n) {
            unsigned b0, b1, s0, s1;
            split(xrow[8 * n], b0, s0);       // B[t][g]   = X[2t][8n + g]
            split(xrow[LD + 8 * n], b1, s1);  // B[t+4][g] = X[2t+1][8n + g]
#pragma unroll
            for (int m = 0; m < 2; ++m) mma3(out[m][n], a[m], b0, b1, s0, s1);
        }
    }
}

// acc += out, elementwise (fp32 adds, rounded to nearest)
template <int ND>
__device__ __forceinline__ void add_to(float (&acc)[2][ND][4], const float (&x)[2][ND][4]) {
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int n = 0; n < ND; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[m][n][e] += x[m][n][e];
}

template <int D, bool CHUNKS>
__global__ void __launch_bounds__(THREADS, 1) key_tile_kernel(Params p) {
    using L = Smem<D>;
    constexpr int LD = L::LD, LDT = L::LDT, KSTEPS = D / 8, ND = D / 32;
    extern __shared__ __align__(16) float smem[];
    float *Ks = smem + L::K, *Vs = smem + L::V, *Qs = smem + L::Q, *Gs = smem + L::G;
    float *PT = smem + L::PT, *dST = smem + L::DST, *dSr = smem + L::DSR, *lse_s = smem + L::LSE, *delta_s = smem + L::DELTA;

    const int c0 = int(blockIdx.x) * BC;
    const size_t bh = blockIdx.y;
    const float* q = p.q + bh * p.Sq * D;
    const float* go = p.dout + bh * p.Sq * D;
    const float* lse = p.lse + bh * p.Sq;
    const float* dlt = p.delta + bh * p.Sq;
    float* dq = p.dq + bh * p.Sq * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int offset = p.Sk - p.Sq;  // causal: key j visible to query i iff j ≤ i + offset

    load_rows<D, BC>(Ks, p.k + bh * p.Sk * D, c0, p.Sk);
    load_rows<D, BC>(Vs, p.v + bh * p.Sk * D, c0, p.Sk);
    // causal: rows below c0 − offset see no key of this tile
    const int r_begin = p.causal ? max(0, c0 - offset) / BR * BR : 0;
    if (r_begin < p.Sq) {
        load_rows<D, BR>(Qs, q, r_begin, p.Sq);
        load_rows<D, BR>(Gs, go, r_begin, p.Sq);
        load_row_terms(lse_s, delta_s, lse, dlt, r_begin, p.Sq);
    }
    cp_async_commit();

    // S, dP: rows sm0 … sm0+15 × keys sn0 … sn0+31 of the tile. dV, dK: keys om0 … +31; dQ: rows om0 … +31; both
    // head dims od0 … od0 + D/4 − 1.
    const int sm0 = 16 * (warp % 4), sn0 = 32 * (warp / 4), om0 = 32 * (warp % 2), od0 = (D / 4) * (warp / 2);
    // ldmatrix addresses. A (Q, dO) of k-step kk: matrices (rows 0–7, cols 0–3), (rows 8–15, cols 0–3), (rows 0–7,
    // cols 4–7), (rows 8–15, cols 4–7) = a0 … a3. B (K, V) of keys 16nb …: (keys 0–7, cols 0–3), (keys 0–7, cols
    // 4–7), (keys 8–15, cols 0–3), (keys 8–15, cols 4–7) = b0, b1 of key block 2nb, b0, b1 of 2nb + 1.
    const int a_off = (sm0 + lane % 8 + ((lane / 8) % 2) * 8) * LD + (lane / 16) * 4;
    const int b_off = (sn0 + lane % 8 + (lane / 16) * 8) * LD + ((lane / 8) % 2) * 4;
    const unsigned q_addr = smem_u32(Qs + a_off), g_addr = smem_u32(Gs + a_off);
    const unsigned k_addr = smem_u32(Ks + b_off), v_addr = smem_u32(Vs + b_off);

    float dv[2][ND][4], dk[2][ND][4];
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int n = 0; n < ND; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) dv[m][n][e] = 0.f, dk[m][n][e] = 0.f;

    for (int r0 = r_begin; r0 < p.Sq; r0 += BR) {
        cp_async_wait_all();
        __syncthreads();  // Q_i, dO_i, lse, D_i have landed (and K_j, V_j the first time)

        // ---- S = Q_i·K_jᵀ and dP = dO_i·V_jᵀ, 8 head dims a step, three MMAs a product; with CHUNKS, each 32 head
        // dims in fresh accumulators added in fp32 (see "The accumulation")
        float s[4][4], dp[4][4];
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[n][e] = 0.f, dp[n][e] = 0.f;
        constexpr int STEP = CHUNKS ? 4 : KSTEPS;  // k-steps per accumulator
#pragma unroll 1
        for (int k0 = 0; k0 < KSTEPS; k0 += STEP) {
            float sc[4][4], dc[4][4];
#pragma unroll
            for (int n = 0; n < 4; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) sc[n][e] = 0.f, dc[n][e] = 0.f;
#pragma unroll 2
            for (int kk = k0; kk < k0 + STEP; ++kk) {
                const unsigned kofs = unsigned(kk * 8 * 4);
                unsigned x[4];
                Frag qa, ga;
                ldmatrix_x4(q_addr + kofs, x), split4(x, qa);
                ldmatrix_x4(g_addr + kofs, x), split4(x, ga);
#pragma unroll
                for (int nb = 0; nb < 2; ++nb) {
                    const unsigned bofs = kofs + unsigned(nb * 16 * LD * 4);
                    unsigned kb[4], ks[4], vb[4], vs[4];
                    ldmatrix_x4(k_addr + bofs, x);
#pragma unroll
                    for (int e = 0; e < 4; ++e) split(__uint_as_float(x[e]), kb[e], ks[e]);
                    ldmatrix_x4(v_addr + bofs, x);
#pragma unroll
                    for (int e = 0; e < 4; ++e) split(__uint_as_float(x[e]), vb[e], vs[e]);
                    mma3(sc[2 * nb], qa, kb[0], kb[1], ks[0], ks[1]);
                    mma3(sc[2 * nb + 1], qa, kb[2], kb[3], ks[2], ks[3]);
                    mma3(dc[2 * nb], ga, vb[0], vb[1], vs[0], vs[1]);
                    mma3(dc[2 * nb + 1], ga, vb[2], vb[3], vs[2], vs[3]);
                }
            }
#pragma unroll
            for (int n = 0; n < 4; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) s[n][e] += sc[n][e], dp[n][e] += dc[n][e];
        }

        // ---- P = exp2(S·log2(e)/√D − lse·log2(e)), 0 where masked (key ≥ Sk, row ≥ Sq, causal key > row + offset;
        // a row that sees no key has lse = +∞: 0 by itself); dS = P∘(dP − D_i). Then Pᵀ, dSᵀ and dS to shared memory.
        // Thread (g, t) holds rows sm0 + g (e = 0, 1) and sm0 + g + 8 (e = 2, 3), keys sn0 + 8n + 2t + (e & 1).
        const bool edge = c0 + BC > p.Sk || r0 + BR > p.Sq || (p.causal && c0 + BC - 1 > r0 + offset);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int rr = sm0 + g + 8 * h, row = r0 + rr;
            const float l2 = lse_s[rr] * kLog2e, di = delta_s[rr];
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                float pr[2], ds[2];
#pragma unroll
                for (int b = 0; b < 2; ++b) {
                    const int kc = sn0 + 8 * n + 2 * t + b, key = c0 + kc;
                    pr[b] = ex2(fmaf(s[n][2 * h + b], p.scale_log2, -l2));
                    if (edge && (row >= p.Sq || key >= p.Sk || (p.causal && key > row + offset))) pr[b] = 0.f;
                    ds[b] = pr[b] * (dp[n][2 * h + b] - di);
                    PT[kc * LDT + rr] = pr[b];
                    dST[kc * LDT + rr] = ds[b];
                }
                *reinterpret_cast<float2*>(dSr + rr * LDT + sn0 + 8 * n + 2 * t) = make_float2(ds[0], ds[1]);
            }
        }
        __syncthreads();  // P and dS are in shared memory

        // ---- dV_j += Pᵀ·dO_i and dK_j += dSᵀ·Q_i (k = the tile's rows)
        {
            float part[2][ND][4];
            tile_product<D>(part, PT, Gs, om0, od0, g, t);
            add_to(dv, part);
            tile_product<D>(part, dST, Qs, om0, od0, g, t);
            add_to(dk, part);
        }
        __syncthreads();  // every read of Q_i, dO_i, lse, D_i (and Pᵀ, dSᵀ) is done: the next tile's come in now
        if (r0 + BR < p.Sq) {
            load_rows<D, BR>(Qs, q, r0 + BR, p.Sq);
            load_rows<D, BR>(Gs, go, r0 + BR, p.Sq);
            load_row_terms(lse_s, delta_s, lse, dlt, r0 + BR, p.Sq);
        }
        cp_async_commit();

        // ---- dQ_i += dS·K_j/√D (k = the tile's keys): this tile's share, by float4 atomics. Lane pairs (t, t^1) swap
        // halves so that the even lane holds 4 consecutive dims of row g and the odd one of row g + 8.
        float dqa[2][ND][4];
        tile_product<D>(dqa, dSr, Ks, om0, od0, g, t);
        const bool odd = t & 1;
#pragma unroll
        for (int m = 0; m < 2; ++m) {
            const int row = r0 + om0 + 16 * m + g + (odd ? 8 : 0);
#pragma unroll
            for (int n = 0; n < ND; ++n) {
                const float* c = dqa[m][n];
                const float x0 = __shfl_xor_sync(0xffffffffu, odd ? c[0] : c[2], 1);
                const float x1 = __shfl_xor_sync(0xffffffffu, odd ? c[1] : c[3], 1);
                const float4 val = odd ? make_float4(x0 * p.scale, x1 * p.scale, c[2] * p.scale, c[3] * p.scale)
                                       : make_float4(c[0] * p.scale, c[1] * p.scale, x0 * p.scale, x1 * p.scale);
                if (row < p.Sq) {
                    float* dst = dq + size_t(row) * D + od0 + 8 * n + 2 * (t & ~1);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
                    atomicAdd(reinterpret_cast<float4*>(dst), val);  // one red.global.add.v4.f32
#else
                    atomicAdd(dst, val.x), atomicAdd(dst + 1, val.y), atomicAdd(dst + 2, val.z), atomicAdd(dst + 3, val.w);
#endif
                }
            }
        }
    }
    cp_async_wait_all();  // nothing in flight when the block ends

    // ---- dK_j/√D and dV_j for keys < Sk: thread (g, t) holds keys om0 + 16m + g (+8), head dims od0 + 8n + 2t, +1
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int key = c0 + om0 + 16 * m + g + 8 * h;
            if (key >= p.Sk) continue;
            float* dkr = p.dk + (bh * p.Sk + key) * D + od0 + 2 * t;
            float* dvr = p.dv + (bh * p.Sk + key) * D + od0 + 2 * t;
#pragma unroll
            for (int n = 0; n < ND; ++n) {
                *reinterpret_cast<float2*>(dkr + 8 * n) = make_float2(dk[m][n][2 * h] * p.scale, dk[m][n][2 * h + 1] * p.scale);
                *reinterpret_cast<float2*>(dvr + 8 * n) = make_float2(dv[m][n][2 * h], dv[m][n][2 * h + 1]);
            }
        }
}

// D_i = Σ_d dO[i][d]·O[i][d], one warp a row; the same pass zeroes dQ (the key tiles add into it).
template <int D>
__global__ void __launch_bounds__(256) row_term_kernel(const float* o, const float* dout, float* delta, float* dq, size_t rows) {
    const size_t row = size_t(blockIdx.x) * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;  // the whole warp
    const float4* o4 = reinterpret_cast<const float4*>(o + row * D);
    const float4* g4 = reinterpret_cast<const float4*>(dout + row * D);
    float sum = 0.0f;
    for (int j = lane; j < D / 4; j += 32) {
        const float4 a = o4[j], b = g4[j];
        sum = fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, sum))));
        reinterpret_cast<float4*>(dq + row * D)[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) delta[row] = sum;
}

// ------------------------------------------------------------------------------------------------
// The host side: the interface's checks, D_i's scratch, the launches.
// ------------------------------------------------------------------------------------------------
inline void validate(std::initializer_list<std::pair<const char*, const void*>> ptrs, int B, int H, int Sq, int Sk, int D) {
    const std::string fn = "flash_attention_backward";
    if (D != 32 && D != 64 && D != 96 && D != 128)
        throw std::invalid_argument(fn + ": head_dim " + std::to_string(D) + " is not supported (32, 64, 96 or 128)");
    for (const auto& [name, value] : {std::pair{"B", B}, std::pair{"H", H}, std::pair{"Sq", Sq}, std::pair{"Sk", Sk}})
        if (value <= 0) throw std::invalid_argument(fn + ": " + name + " = " + std::to_string(value) + " (sizes must be positive)");
    if (int64_t(B) * H > 65535)
        throw std::invalid_argument(fn + ": B·H = " + std::to_string(int64_t(B) * H) + " (at most 65535 heads a call)");
    for (const auto& [name, ptr] : ptrs) {
        if (!ptr) throw std::invalid_argument(fn + ": " + name + " is a null pointer");
        if (reinterpret_cast<uintptr_t>(ptr) % 16)
            throw std::invalid_argument(fn + ": " + name + " is not 16-byte aligned (rows are read as float4)");
    }
}

// Whether this GPU runs the rung at head_dim D: TF32 MMAs (sm_80 or newer) and the layout's shared memory.
inline bool runs_here(int D) {
    static const int2 dev = [] {
        int d = 0, major = 0, smem = 0;
        CUDA_CHECK(cudaGetDevice(&d));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
        CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, d));
        return int2{major, smem};
    }();
    const size_t need = D == 32 ? Smem<32>::BYTES : D == 64 ? Smem<64>::BYTES : D == 96 ? Smem<96>::BYTES : Smem<128>::BYTES;
    return dev.x >= 8 && size_t(dev.y) >= need;
}

template <int D, bool CHUNKS>
void launch(const Params& p, const float* o, float* delta, int BH) {
    const size_t rows = size_t(BH) * p.Sq;
    row_term_kernel<D><<<unsigned((rows + 7) / 8), 256>>>(o, p.dout, delta, p.dq, rows);
    CUDA_CHECK_LAUNCH();
    auto kernel = key_tile_kernel<D, CHUNKS>;
    static const bool attr_set = [&] {  // above 48 KB of dynamic shared memory must be allowed, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Smem<D>::BYTES)));
        return true;
    }();
    (void)attr_set;
    kernel<<<dim3(unsigned((p.Sk + BC - 1) / BC), unsigned(BH)), THREADS, Smem<D>::BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
}

// The backward of task4_backward/task4_backward.h on the tensor cores; where this GPU cannot run it (runs_here), `fallback`
// (a function of the same signature: the FFMA reference) does the work.
template <bool CHUNKS = true, class Fallback>
void backward(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse, float* dq,
              float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal, Fallback&& fallback) {
    validate({{"q", q}, {"k", k}, {"v", v}, {"o", o}, {"dout", dout}, {"lse", lse}, {"dq", dq}, {"dk", dk}, {"dv", dv}}, B, H, Sq,
             Sk, D);
    if (!runs_here(D)) return fallback(q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal);
    const int BH = B * H;
    float* delta = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&delta), size_t(BH) * Sq * sizeof(float), attn::keeping_pool(), 0));
    const double scale = 1.0 / std::sqrt(double(D));
    const Params p{q, k, v, dout, lse, delta, dq, dk, dv, Sq, Sk, causal, float(scale), float(1.4426950408889634 * scale)};
    try {
        switch (D) {
            case 32: launch<32, CHUNKS>(p, o, delta, BH); break;
            case 64: launch<64, CHUNKS>(p, o, delta, BH); break;
            case 96: launch<96, CHUNKS>(p, o, delta, BH); break;
            default: launch<128, CHUNKS>(p, o, delta, BH); break;
        }
    } catch (...) {
        cudaFreeAsync(delta, 0);
        throw;
    }
    CUDA_CHECK(cudaFreeAsync(delta, 0));
}

}  // namespace bwd_tf32
}  // namespace task4_ladder
