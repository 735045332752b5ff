// Task 4, bonus part — FlashAttention forward in bf16 on tensor cores (interface: task4_bf16/task4_bf16.h).
//
// Build and run:  make task4-bf16                 (your skeleton: the bonus tests; on a GPU)
//                 make task4-bf16 IMPL=reference  (the model solution)
//                 make bench-task4-bf16           (TFLOP/s on a GPU; tools/vs_torch/sdpa_bf16.py times torch beside it)
// Inputs and output are bf16, the softmax statistics and every accumulation float32. Needs sm_80 or
// newer (bf16 tensor cores); on an older GPU the call throws std::runtime_error saying so.
// task4/README.md ("Bonus: bf16 on tensor cores") gives the plan, the tolerance and the ladder.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/grid.cuh"
#include "common/todo.h"
#include "task4_bf16/task4_bf16.h"
#if SOLUTION
#include "task4_bf16/reference/bf16_mma.cuh"
#endif

namespace task4 {

#if SOLUTION
namespace bf16_detail {

// ------------------------------------------------------------------------------------------------
// On Hopper (compute capability 9.0) the entry point below hands the call to hopper_forward
// (flash_attention_bf16_sm90.cu: the ladder's rung 10, wgmma + TMA + warp specialisation). Elsewhere:
// The reference: rung 4 of the bf16 ladder (since 2026-11-22: 361 TFLOP/s at B=4 H=16 S=4096 D=128 on an
// H100 against torch FA2's 359 in the same run; docs/perf.md). FlashAttention-2's forward with
// mma.sync.aligned.m16n8k16 (bf16 in, fp32 out; the primitives, shared with the ladder, in bf16_mma.cuh).
// Rungs 1–3 are course staff's, in task4_bf16/ladder/ (rung 3: 16 rows a warp, the same pipeline).
// A block of WARPS warps owns BR query rows of one (batch, head). Per key tile of BC keys: S = Q·Kᵀ in mma
// C fragments (K's B fragments by ldmatrix: K rows are the columns of Kᵀ), the online softmax on them in
// registers (row max over the 4 lanes of a quad), then O += P·V with P taken straight from S's fragments (the
// C layout of two n8 blocks is the A layout of one k16 block) rounded to bf16, V's B fragments by
// ldmatrix.trans. The scores never leave the registers. K and V tiles are XOR-swizzled in shared memory and
// double-buffered with cp.async (tile j+1 is in flight while tile j is computed).
// FlashAttention-2's warp layout: each warp owns MREP·16 query rows (MREP = 2: 32 rows, as FA2's 4-warp
// 128-row tile), so every K or V fragment read from shared memory by ldmatrix feeds MREP·2 MMAs instead of
// rung 3's 2. Why: with 16 rows a warp, shared memory delivers 1 B for every
// 16 FLOP of mma.sync (an ldmatrix.x4 = 512 B for 2 × 4096 FLOP), and an SM reads 128 B a clock: 2048
// FLOP/clk, under the tensor cores' mma.sync rate. Two M-tiles halve that traffic. The costs are registers
// (O: MREP·D/2 fp32 a thread, S: MREP·BC/2), so Q is either kept in registers (QREG) or re-read from shared
// memory each tile (FA2's choice at D=128, where O alone takes 128 registers a thread).
// Also: exp2 as ex2.approx.ftz (no denormal fix-up; the log2(e)/√D scale folded into one FFMA), warps whose
// rows are all above a causal tile's first key skip its arithmetic (they still load and synchronise), and the
// output leaves through shared memory (each warp its own rows of the Q tile) as 16-byte coalesced stores.
// ------------------------------------------------------------------------------------------------
__device__ __forceinline__ float ex2_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// ROWS rows of a [len, D] matrix from row0 into a swizzled tile by cp.async (zeros past len), for rung 4. Thread t
// copies chunk t mod D/8 of rows t / (D/8) + i·STEP: its addresses are one base plus constants (STEP is a multiple of
// 8, so the swizzle is the same in every row it copies), and only a tile that crosses len pays for predicates. (Rung
// 3's general load_tile's per-chunk selects gave every chunk its own 64-bit address, kept live across the key loop.)
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile_async(unsigned tile, const __nv_bfloat16* src, int row0, int len) {
    constexpr int CPR = D / 8, STEP = THREADS / CPR, ITERS = ROWS / STEP;
    static_assert(STEP % 8 == 0 && ROWS % STEP == 0, "rows per pass must keep the swizzle and divide the tile");
    const int r = threadIdx.x / CPR, ch = threadIdx.x % CPR;
    const __nv_bfloat16* s = src + size_t(row0 + r) * D + ch * 8;
    const unsigned d = tile + unsigned(tile_offset<D, true>(r, ch)) * 2;
    if (row0 + ROWS <= len) {
#pragma unroll
        for (int i = 0; i < ITERS; ++i)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d + i * STEP * D * 2), "l"(s + i * STEP * D));
    } else {
#pragma unroll
        for (int i = 0; i < ITERS; ++i) {
            const bool valid = row0 + r + i * STEP < len;
            cp_async16(d + i * STEP * D * 2, valid ? s + i * STEP * D : src, valid);
        }
    }
}

template <int D, int WARPS, int MREP, int BC, bool QREG, bool LAZY>
__global__ void __launch_bounds__(WARPS * 32) flash_bf16_fa2_kernel(Params p) {
    constexpr int RW = 16 * MREP, BR = RW * WARPS, THREADS = WARPS * 32;
    constexpr int DK = D / 16, DN = D / 8, NB = BC / 8, KB = BC / 16, CPR = D / 8;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    __nv_bfloat16* Ks = Qs + BR * D;           // 2 × [BC][D], swizzled
    __nv_bfloat16* Vs = Ks + 2 * BC * D;       // 2 × [BC][D], swizzled

    const int row_blocks = gridDim.y;
    const int rb = p.causal ? row_blocks - 1 - int(blockIdx.y) : int(blockIdx.y);  // causal: longest rows first
    const int r0 = rb * BR;
    const size_t bh = blockIdx.x;
    const __nv_bfloat16* q = p.q + bh * p.Sq * D;
    const __nv_bfloat16* k = p.k + bh * p.Sk * D;
    const __nv_bfloat16* v = p.v + bh * p.Sk * D;
    __nv_bfloat16* o = p.o + bh * p.Sq * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int offset = p.Sk - p.Sq;  // causal: key j visible to query i iff j ≤ i + offset

    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? max(0, min(p.Sk, last_row + offset + 1)) : p.Sk;
    const int n_tiles = (kv_end + BC - 1) / BC;
    const int w0 = r0 + warp * RW;                                   // this warp's first row
    const int w_last_key = p.causal ? min(w0 + RW - 1, p.Sq - 1) + offset : p.Sk - 1;  // last key it can see
    const bool w_active = w0 < p.Sq;

    load_tile_async<D, BR, THREADS>(smem_u32(Qs), q, r0, p.Sq);
    cp_async_commit();
    if (n_tiles > 0) {
        load_tile_async<D, BC, THREADS>(smem_u32(Ks), k, 0, p.Sk);
        load_tile_async<D, BC, THREADS>(smem_u32(Vs), v, 0, p.Sk);
    }
    cp_async_commit();  // (possibly empty) group of tile 0
    cp_async_wait<1>();  // Q has landed
    __syncthreads();

    // ldmatrix addresses. Every tile starts at a multiple of 256 bytes and a row is D·2 ≥ 128 bytes, so a row's
    // swizzled chunk (c ^ (row mod 8)) sits in address bits 4–6 (D=64) or 4–7 (D=128), untouched by adding whole
    // rows: with c = 2kk + c1 (c1 ∈ {0, 1}), chunk c of a row is the address of its chunk c1 XOR (2kk << 4). So one
    // base register per operand serves every k-block (one LOP3 each) and every row block (an immediate offset),
    // where per-(row, chunk) offsets had the compiler keep dozens of addresses live (255 registers and spills).
    // Q's A fragments, M-tile mr: lanes 0–15 address rows 0–15 at chunk 2kk, lanes 16–31 at 2kk+1
    const unsigned q_base = smem_u32(Qs + tile_offset<D, true>(warp * RW + lane % 16, lane / 16));
    auto q_addr = [&](int mr, int kk) { return (q_base + mr * 16 * D * 2) ^ (kk << 5); };
    // K's B fragments of n-blocks 2nb, 2nb+1: keys 16nb + lane%8 (+8 for lanes 16–31), chunk 2kk (+1 for lanes
    // 8–15, 24–31); V's (trans) of head-dim blocks 2db, 2db+1: keys 16kb + lane%8 (+8 for lanes 8–15, 24–31),
    // chunk 2db (+1 for lanes 16–31)
    const unsigned k_base = smem_u32(Ks + tile_offset<D, true>(lane % 8 + (lane / 16) * 8, (lane / 8) % 2));
    const unsigned v_base = smem_u32(Vs + tile_offset<D, true>(lane % 8 + ((lane / 8) % 2) * 8, lane / 16));
    unsigned qf[QREG ? MREP : 1][QREG ? DK : 1][4];
    if constexpr (QREG) {
#pragma unroll
        for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
            for (int kk = 0; kk < DK; ++kk)
                ldmatrix_x4(q_addr(mr, kk), qf[mr][kk][0], qf[mr][kk][1], qf[mr][kk][2], qf[mr][kk][3]);
    }

    float of[MREP][DN][4];
#pragma unroll
    for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
        for (int n = 0; n < DN; ++n) of[mr][n][0] = of[mr][n][1] = of[mr][n][2] = of[mr][n][3] = 0.f;
    float m[MREP][2], l[MREP][2];
#pragma unroll
    for (int mr = 0; mr < MREP; ++mr) m[mr][0] = m[mr][1] = -INFINITY, l[mr][0] = l[mr][1] = 0.f;

    for (int j = 0; j < n_tiles; ++j) {
        const int c0 = j * BC;
        const int stage = j & 1;
        if (j + 1 < n_tiles) {
            load_tile_async<D, BC, THREADS>(smem_u32(Ks + (stage ^ 1) * BC * D), k, c0 + BC, p.Sk);
            load_tile_async<D, BC, THREADS>(smem_u32(Vs + (stage ^ 1) * BC * D), v, c0 + BC, p.Sk);
            cp_async_commit();
            cp_async_wait<1>();  // tile j has landed; tile j+1 may still be in flight
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        const unsigned k_tile = k_base + stage * BC * D * 2, v_tile = v_base + stage * BC * D * 2;

        if (w_active && c0 <= w_last_key) {  // warp-uniform: a tile wholly masked for this warp costs it nothing
            // S = Q·Kᵀ: K's B fragments of n-blocks 2nb, 2nb+1 from one ldmatrix.x4, used by every M-tile
            float sf[MREP][NB][4];
#pragma unroll
            for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                for (int n = 0; n < NB; ++n) sf[mr][n][0] = sf[mr][n][1] = sf[mr][n][2] = sf[mr][n][3] = 0.f;
#pragma unroll
            for (int kk = 0; kk < DK; ++kk) {
                unsigned qa[MREP][4];
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr) {
                    if constexpr (QREG) {
#pragma unroll
                        for (int e = 0; e < 4; ++e) qa[mr][e] = qf[mr][kk][e];
                    } else {
                        ldmatrix_x4(q_addr(mr, kk), qa[mr][0], qa[mr][1], qa[mr][2], qa[mr][3]);
                    }
                }
#pragma unroll
                for (int nb = 0; nb < KB; ++nb) {
                    unsigned b0, b1, b2, b3;
                    ldmatrix_x4((k_tile + nb * 16 * D * 2) ^ (kk << 5), b0, b1, b2, b3);
#pragma unroll
                    for (int mr = 0; mr < MREP; ++mr) {
                        mma_bf16(sf[mr][2 * nb], qa[mr], b0, b1);
                        mma_bf16(sf[mr][2 * nb + 1], qa[mr], b2, b3);
                    }
                }
            }

            // masks only where a tile crosses the end of K or this warp's causal diagonal
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

            // online softmax, per M-tile mr and row h (0: g, 1: g + 8), in log2 units
            if constexpr (LAZY) {
                // The row maxima by trees (depth 4, not a chain of 16 dependent FMNMX), then one vote: O and l are
                // rescaled only when some row of this warp has a new maximum. Exact: otherwise every alpha is 1.
                // (Random scores move a running maximum less and less often as the keys go by.)
                float mxs[MREP][2];
                bool grew = false;
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        float r[NB];
#pragma unroll
                        for (int n = 0; n < NB; ++n) r[n] = fmaxf(sf[mr][n][2 * h], sf[mr][n][2 * h + 1]);
#pragma unroll
                        for (int w = NB / 2; w >= 1; w /= 2)
#pragma unroll
                            for (int n = 0; n < w; ++n) r[n] = fmaxf(r[n], r[n + w]);
                        float mx = fmaxf(r[0], __shfl_xor_sync(0xffffffffu, r[0], 1));
                        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                        mxs[mr][h] = mx * p.scale_log2;
                        grew |= mxs[mr][h] > m[mr][h];
                    }
                if (__any_sync(0xffffffffu, grew)) {
#pragma unroll
                    for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const float m_new = fmaxf(m[mr][h], mxs[mr][h]);
                            const float alpha = ex2_ftz(m[mr][h] - (m_new == -INFINITY ? 0.f : m_new));
                            m[mr][h] = m_new;
                            l[mr][h] *= alpha;
#pragma unroll
                            for (int n = 0; n < DN; ++n) of[mr][n][2 * h] *= alpha, of[mr][n][2 * h + 1] *= alpha;
                        }
                }
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const float m_use = m[mr][h] == -INFINITY ? 0.f : m[mr][h];  // a row with nothing visible yet
                        float r[NB];
#pragma unroll
                        for (int n = 0; n < NB; ++n) {
                            sf[mr][n][2 * h] = ex2_ftz(fmaf(sf[mr][n][2 * h], p.scale_log2, -m_use));
                            sf[mr][n][2 * h + 1] = ex2_ftz(fmaf(sf[mr][n][2 * h + 1], p.scale_log2, -m_use));
                            r[n] = sf[mr][n][2 * h] + sf[mr][n][2 * h + 1];
                        }
#pragma unroll
                        for (int w = NB / 2; w >= 1; w /= 2)
#pragma unroll
                            for (int n = 0; n < w; ++n) r[n] += r[n + w];
                        l[mr][h] += r[0];
                    }
            } else {
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
                        const float alpha = ex2_ftz(m[mr][h] - m_use);
                        m[mr][h] = m_new;
                        float sum = 0.f;
#pragma unroll
                        for (int n = 0; n < NB; ++n) {
                            sf[mr][n][2 * h] = ex2_ftz(fmaf(sf[mr][n][2 * h], p.scale_log2, -m_use));
                            sf[mr][n][2 * h + 1] = ex2_ftz(fmaf(sf[mr][n][2 * h + 1], p.scale_log2, -m_use));
                            sum += sf[mr][n][2 * h] + sf[mr][n][2 * h + 1];
                        }
                        l[mr][h] = l[mr][h] * alpha + sum;
#pragma unroll
                        for (int n = 0; n < DN; ++n) of[mr][n][2 * h] *= alpha, of[mr][n][2 * h + 1] *= alpha;
                    }
            }

            // O += P·V: P's A fragments straight from S's C fragments (n-blocks 2kb, 2kb+1), rounded to bf16;
            // V's B fragments of head-dim blocks 2db, 2db+1 from one ldmatrix.x4.trans, used by every M-tile
#pragma unroll
            for (int kb = 0; kb < KB; ++kb) {
                unsigned pa[MREP][4];
#pragma unroll
                for (int mr = 0; mr < MREP; ++mr) {
                    pa[mr][0] = pack_bf16(sf[mr][2 * kb][0], sf[mr][2 * kb][1]);
                    pa[mr][1] = pack_bf16(sf[mr][2 * kb][2], sf[mr][2 * kb][3]);
                    pa[mr][2] = pack_bf16(sf[mr][2 * kb + 1][0], sf[mr][2 * kb + 1][1]);
                    pa[mr][3] = pack_bf16(sf[mr][2 * kb + 1][2], sf[mr][2 * kb + 1][3]);
                }
#pragma unroll
                for (int db = 0; db < DK; ++db) {
                    unsigned b0, b1, b2, b3;
                    ldmatrix_x4_trans((v_tile + kb * 16 * D * 2) ^ (db << 5), b0, b1, b2, b3);
#pragma unroll
                    for (int mr = 0; mr < MREP; ++mr) {
                        mma_bf16(of[mr][2 * db], pa[mr], b0, b1);
                        mma_bf16(of[mr][2 * db + 1], pa[mr], b2, b3);
                    }
                }
            }
        }
        __syncthreads();  // everyone is done with this stage before it is refilled
    }

    // O / l (l summed over the quad's 4 lanes; a row that saw no key gets zeros), staged as bf16 in this warp's
    // own rows of the Q tile (no other warp reads them), then written 16 bytes a lane, whole rows per warp; each row's
    // log-sum-exp where it is asked for
#pragma unroll
    for (int mr = 0; mr < MREP; ++mr)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float sum = l[mr][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const float inv = sum > 0.f ? 1.f / sum : 0.f;
            const int r = warp * RW + 16 * mr + g + 8 * h;
            if (p.lse && t == 0 && r0 + r < p.Sq) p.lse[bh * p.Sq + r0 + r] = row_lse(m[mr][h], sum);
#pragma unroll
            for (int n = 0; n < DN; ++n)
                *reinterpret_cast<unsigned*>(Qs + tile_offset<D, true>(r, n) + 2 * t) =
                    pack_bf16(of[mr][n][2 * h] * inv, of[mr][n][2 * h + 1] * inv);
        }
    __syncwarp();
#pragma unroll
    for (int c = lane; c < RW * CPR; c += 32) {
        const int r = warp * RW + c / CPR, ch = c % CPR;
        if (r0 + r < p.Sq)
            *reinterpret_cast<uint4*>(o + size_t(r0 + r) * D + ch * 8) =
                *reinterpret_cast<const uint4*>(Qs + tile_offset<D, true>(r, ch));
    }
}

template <int D, int WARPS, int MREP, int BC, bool QREG, bool LAZY>
void launch_fa2(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                int H, int Sq, int Sk, bool causal, float* lse = nullptr) {
    constexpr int BR = 16 * MREP * WARPS;
    constexpr size_t smem = size_t(BR + 4 * BC) * D * sizeof(__nv_bfloat16);
    auto kernel = flash_bf16_fa2_kernel<D, WARPS, MREP, BC, QREG, LAZY>;
    static const bool attr_set = [&] {  // dynamic shared memory above 48 KB must be allowed, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        return true;
    }();
    (void)attr_set;
    if (B * H == 0 || Sq == 0) return;
    const Params p{q, k, v, o, Sq, Sk, causal, float(1.4426950408889634 / std::sqrt(double(D))), lse};
    const dim3 grid(unsigned(B * H), unsigned((Sq + BR - 1) / BR));
    kernel<<<grid, WARPS * 32, smem>>>(p);
    CUDA_CHECK_LAUNCH();
}

#define ATTNLAB_BF16_FA2_INSTANCES(X)                                                                         \
    X(128, 4, 2, 64, false, false) X(128, 4, 2, 64, false, true) X(128, 8, 2, 64, false, true)             \
    X(64, 4, 2, 64, true, false) X(64, 4, 2, 64, true, true) X(64, 8, 2, 64, true, true)
#define X(D, W, M, BC, QR, LZ)                                                                                         \
    template void launch_fa2<D, W, M, BC, QR, LZ>(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, \
                                                  __nv_bfloat16*, int, int, int, int, bool, float*);
ATTNLAB_BF16_FA2_INSTANCES(X)
#undef X

// The reference is rung 4 with 4 warps × 32 rows and 64-key tiles at both head dims (Q in registers at D=64, re-read
// from shared memory at D=128, where O alone takes 128 registers a thread). H100 2026-11-22 (docs/perf.md, run 5):
// 8 warps × 32 rows was 5–10 % slower; rung 5's lazy rescale equal at D=128 and 2–5 % slower at D=64.

// The sm_90a path (flash_attention_bf16_sm90.cu): runs the forward and returns true on a compute capability 9.0 GPU
// with an sm_90a build and 16-byte-aligned pointers; otherwise returns false, having done nothing.
bool hopper_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                    int H, int Sq, int Sk, int D, bool causal, float* lse = nullptr);

// flash_attention_forward_bf16, and with lse set 4d's flash_attention_forward_bf16_lse
// (task4_bf16_backward/task4_bf16_backward.h): the same checks and kernels, which then also write each row's
// log-sum-exp. `who` names the entry point in the errors.
void forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, int B,
             int H, int Sq, int Sk, int D, bool causal, const std::string& who) {
    if (D != 64 && D != 128)
        throw std::invalid_argument(who + ": head_dim " + std::to_string(D) + " is not supported (64 or 128)");
    if (B < 0 || H < 0 || Sq < 0 || Sk < 1)
        throw std::invalid_argument(who + ": B, H, Sq must be >= 0 and Sk >= 1 (got B=" + std::to_string(B) + " H=" +
                                    std::to_string(H) + " Sq=" + std::to_string(Sq) + " Sk=" + std::to_string(Sk) + ")");
    attn::require_bf16_mma(who);
    if (bf16_detail::hopper_forward(q, k, v, o, B, H, Sq, Sk, D, causal, lse)) return;  // H100, H200: flash_attention_bf16_sm90.cu
    if (D == 64)
        bf16_detail::launch_fa2<64, 4, 2, 64, true, false>(q, k, v, o, B, H, Sq, Sk, causal, lse);
    else
        bf16_detail::launch_fa2<128, 4, 2, 64, false, false>(q, k, v, o, B, H, Sq, Sk, causal, lse);
}

}  // namespace bf16_detail
#else
// ------------------------------------------------------------------------------------------------
// Your kernel: the plan of task4_bf16/README.md, with WMMA fragments
// (#include <mma.h>; nvcuda::wmma, 16×16×16 tiles, bf16 operands, float accumulators).
// A block of 4 warps (128 threads) owns Br = 64 query rows of one (batch, head) — blockIdx.x is the
// row tile, the head b·H + h is attn::head_of_block() (blockIdx.y, and blockIdx.z past 65535 heads:
// common/cuda/grid.cuh) — and walks the keys Bc = 64 at a time. Dynamic shared memory:
//   Qs [64][D] bf16   Ks [64][D] bf16   Vs [64][D] bf16
//   Ss [64][64] fp32 (the tile's scores)   Ps [64][64] bf16 (the probabilities)
//   Os [64][D] fp32 (the output accumulator)   m[64], l[64] fp32 (running max and sum per row)
// (= 104 KB at D = 128: two blocks per SM.)
//
// TODO(task4b.2) load Q (rows past Sq: zeros), zero Os, m = −inf, l = 0.
// TODO(task4b.3) per key tile (causal: stop after the last key any row can see, row + Sk − Sq):
//     load K and V (rows past Sk: zeros); __syncthreads(); warp w computes the 16×64 block of
//     S = Q·Kᵀ for its rows 16w … 16w+15 (matrix_a from Qs row-major, matrix_b from Ks col-major:
//     Kᵀ's columns are K's rows), accumulating D/16 products in float, and stores it to Ss.
// TODO(task4b.4) online softmax: 2 threads per row (or a warp per 16 rows, your choice) read the
//     row of Ss, mask (key ≥ Sk, or causal and key > row + Sk − Sq: −inf), m_new = max(m, max),
//     alpha = exp(m − m_new) (1 while m_new is −inf), p = exp(s/√D − m_new) written to Ps as bf16,
//     l = alpha·l + Σ p (the float p), the row of Os multiplied by alpha; __syncthreads().
// TODO(task4b.5) Os += Ps·Vs: load the accumulator fragments from Os (load_matrix_sync, mem_row_major),
//     mma_sync over the 4 k-steps of 16 keys, store them back; __syncthreads() before the next tile.
// TODO(task4b.6) write Os / l as bf16 for rows < Sq (a row that saw no key gets zeros).
// Every accumulation stays in float: a bf16 accumulator (P·V summed in bf16) fails the tests.
template <int D>
__global__ void __launch_bounds__(128) flash_bf16_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                         const __nv_bfloat16* v, __nv_bfloat16* o, int Sq, int Sk,
                                                         bool causal, float scale) {}
#endif

void flash_attention_forward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                  __nv_bfloat16* o, int B, int H, int Sq, int Sk, int D, bool causal) {
#if SOLUTION
    bf16_detail::forward(q, k, v, o, nullptr, B, H, Sq, Sk, D, causal, "flash_attention_forward_bf16");
#else
    // TODO(task4b.1): validate (D ∈ {64, 128}, else throw std::invalid_argument naming it; Sk = 0 likewise),
    // then launch flash_bf16_kernel<D> on a grid of attn::grid_over_heads(ceil(Sq / 64), B·H) blocks of 128 threads with the
    // shared memory of the plan above (cudaFuncSetAttribute first when it is above 48 KB), then
    // CUDA_CHECK_LAUNCH(). Measure with `make bench-task4-bf16`; the README's ladder says what comes next.
    (void)q, (void)k, (void)v, (void)o, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4b.1");
#endif
}

}  // namespace task4
