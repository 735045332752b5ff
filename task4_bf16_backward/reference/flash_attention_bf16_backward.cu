// Task 4, bonus part 4d — FlashAttention-2's backward in bf16 on tensor cores (interface:
// task4_bf16_backward/task4_bf16_backward.h).
//
// Build and run:  make task4-bf16-backward                  (your skeleton: the part's tests; on a GPU)
//                 make task4-bf16-backward IMPL=reference   (the model solution)
//                 make bench-task4-bf16-backward            (TFLOP/s on a GPU; tools/vs_torch/sdpa_bf16_backward.py
//                                                            times torch's bf16 backwards beside it)
// Three kernels: the row term δ_i = Σ_d dO_id·O_id (float32, with dQ's float32 accumulator set to zero), the key
// tiles (each block owns 64 keys of one head, holds their dK and dV in registers and walks the query tiles,
// adding its share of dQ to the accumulator with atomics), and dQ's conversion to bf16. Needs sm_80 or newer
// (bf16 mma.sync); on an older GPU the call throws std::runtime_error saying so. The course's reference runs rung 2
// of the ladder on an H100 or H200 (wgmma and TMA, from flash_attention_bf16_backward_sm90.cu, which is empty in the
// kit: a Hopper path of yours may go there).
// task4_bf16_backward/README.md gives the plan, the tolerance and the ladder.
#include <cuda_bf16.h>
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
#include "task4_bf16_backward/task4_bf16_backward.h"
#if SOLUTION
#include "task4_bf16/reference/bf16_mma.cuh"
#endif

namespace task4 {

#if SOLUTION
// ------------------------------------------------------------------------------------------------
// The reference: rung 1 of the bf16 backward's ladder, FlashAttention-2's Algorithm 2 with mma.sync.m16n8k16
// (bf16 in, fp32 out). A block of 4 warps owns BC = 64 keys of one (batch, head); warp w owns keys 16w … 16w+15
// and keeps their dK and dV (16 × D float32 each) in mma C fragments for the whole walk. Per query tile of BR
// rows (Q_i, dO_i, lse_i, δ_i double-buffered by cp.async):
//   Sᵀ  = K·Q_iᵀ              (16 keys × BR rows a warp; A from K by ldmatrix, B from Q's rows by ldmatrix)
//   Pᵀ  = exp2(Sᵀ·log2e/√D − lse·log2e)   (0 where masked; lse = +∞ gives 0: no special case)
//   dV += Pᵀ·dO_i             (A = Pᵀ straight from Sᵀ's C fragments rounded to bf16; B = dO by ldmatrix.trans)
//   dPᵀ = V·dO_iᵀ
//   dSᵀ = Pᵀ∘(dPᵀ − δ)        (float32), stored to shared memory in bf16 for the dQ product
//   dK += dSᵀ·Q_i             (A from dSᵀ's fragments, B = Q by ldmatrix.trans)
//   dQ_i += dS·K              (every warp a share of the BR × D block: A = dS by ldmatrix.trans of dSᵀ, B = K by
//                              ldmatrix.trans), added to a float32 accumulator in global memory with atomics:
//                              the key tiles of one head add into the same rows concurrently.
// Why atomics and not a second pass over the queries (the other way to get dQ): the second pass recomputes S and
// dP (2 of the 5 products again, 1.4× the FLOPs); atomics cost BR·D float adds per tile, which the L2 absorbs.
// Tiles are XOR-swizzled in shared memory (16-byte chunk c of row r at c ^ (r mod 8)), so the 8 rows an
// ldmatrix reads hit 8 different bank groups. The 1/√D of dK and dQ is applied once, at the end.
// ------------------------------------------------------------------------------------------------
namespace bf16_bwd_detail {

constexpr int THREADS = 128, WARPS = 4, BC = 64;
constexpr float kLog2e = 1.4426950408889634f;

// the mma.sync primitives of 4b's reference (task4_bf16/reference/bf16_mma.cuh)
using bf16_detail::cp_async16;
using bf16_detail::cp_async_commit;
using bf16_detail::cp_async_wait;
using bf16_detail::ldmatrix_x4;
using bf16_detail::ldmatrix_x4_trans;
using bf16_detail::mma_bf16;
using bf16_detail::pack_bf16;
using bf16_detail::smem_u32;
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// k-block ks of a warp's C fragments c (16 rows × 8·NB columns, float32) as an mma A fragment (16 × 16, bf16): the C
// layout of two n8 blocks is the A layout of one k16 block.
template <int NB>
__device__ __forceinline__ void a_fragment(unsigned (&a)[4], const float (&c)[NB][4], int ks) {
    a[0] = pack_bf16(c[2 * ks][0], c[2 * ks][1]), a[1] = pack_bf16(c[2 * ks][2], c[2 * ks][3]);
    a[2] = pack_bf16(c[2 * ks + 1][0], c[2 * ks + 1][1]), a[3] = pack_bf16(c[2 * ks + 1][2], c[2 * ks + 1][3]);
}

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows][COLS] bf16 tile, swizzled so that the 8
// consecutive rows an ldmatrix reads land in 8 different 16-byte bank groups: chunk ^ (row mod 8) for rows of 8 or
// more chunks; rows of 4 chunks (64 bytes: two rows share a 128-byte line) use chunk ^ ((row / 2) mod 4).
template <int COLS>
__device__ __forceinline__ int swz(int row, int chunk) {
    constexpr int CH = COLS / 8;
    static_assert(CH == 4 || CH % 8 == 0, "rows of 4, 8 or 16 chunks");
    if constexpr (CH == 4) return row * COLS + (chunk ^ ((row >> 1) & 3)) * 8;
    else return row * COLS + (chunk ^ (row & 7)) * 8;
}

// ROWS rows of a [len, COLS] matrix from row0 into a swizzled tile by cp.async; zeros past len.
template <int COLS, int ROWS>
__device__ __forceinline__ void load_tile(__nv_bfloat16* tile, const __nv_bfloat16* src, int row0, int len) {
    constexpr int CH = COLS / 8;
    for (int c = threadIdx.x; c < ROWS * CH; c += THREADS) {
        const int r = c / CH, ch = c % CH;
        const bool valid = row0 + r < len;
        cp_async16(smem_u32(tile + swz<COLS>(r, ch)), src + size_t(valid ? row0 + r : 0) * COLS + ch * 8, valid);
    }
}

struct Params {
    const __nv_bfloat16 *q, *k, *v, *dout;
    const float *lse, *delta;
    float* dq_accum;  // [B, H, Sq, D] float32, zeroed by the row-term kernel
    __nv_bfloat16 *dk, *dv;
    int Sq, Sk;
    bool causal;
    float scale, scale_log2;  // 1/√D, log2(e)/√D
    long long BH;
};

template <int D, int BR>
struct Smem {  // in bf16 elements, then float32
    static constexpr int K = 0, V = K + BC * D, Q = V + BC * D, DO = Q + 2 * BR * D, DS = DO + 2 * BR * D,
                         HALVES = DS + BC * BR;
    static constexpr int BYTES = HALVES * 2 + 4 * BR * 4;  // + lse·log2e and δ, two buffers each
};

// δ_i = Σ_d dO_id·O_id for every row (D/8 threads a row, 8 bf16 each); rung 1's dQ accumulator rows set to zero.
template <int D>
__global__ void __launch_bounds__(256) row_term_kernel(const __nv_bfloat16* o, const __nv_bfloat16* dout, float* delta,
                                                       float* dq_accum, long long rows) {
    constexpr int TPR = D / 8, RPB = 256 / TPR;
    const long long row = blockIdx.x * (long long)RPB + threadIdx.x / TPR;
    const int part = threadIdx.x % TPR;
    float sum = 0.0f;
    if (row < rows) {
        const uint4 a = *reinterpret_cast<const uint4*>(o + row * D + part * 8);
        const uint4 b = *reinterpret_cast<const uint4*>(dout + row * D + part * 8);
        const __nv_bfloat162* x = reinterpret_cast<const __nv_bfloat162*>(&a);
        const __nv_bfloat162* y = reinterpret_cast<const __nv_bfloat162*>(&b);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float2 fx = __bfloat1622float2(x[i]), fy = __bfloat1622float2(y[i]);
            sum += fx.x * fy.x + fx.y * fy.y;
        }
        if (dq_accum) {  // rung 1's accumulator (rung 2 zeroes its own)
            float4* z = reinterpret_cast<float4*>(dq_accum + row * D + part * 8);
            z[0] = z[1] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
    }
#pragma unroll
    for (int off = TPR / 2; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (row < rows && part == 0) delta[row] = sum;
}

// dQ = accumulator / √D in bf16, 8 elements a thread.
__global__ void __launch_bounds__(256) dq_convert_kernel(const float* accum, __nv_bfloat16* dq, long long n8, float scale) {
    const long long i = blockIdx.x * 256LL + threadIdx.x;
    if (i >= n8) return;
    const float4 a = reinterpret_cast<const float4*>(accum)[2 * i], b = reinterpret_cast<const float4*>(accum)[2 * i + 1];
    uint4 out;
    out.x = pack_bf16(a.x * scale, a.y * scale), out.y = pack_bf16(a.z * scale, a.w * scale);
    out.z = pack_bf16(b.x * scale, b.y * scale), out.w = pack_bf16(b.z * scale, b.w * scale);
    reinterpret_cast<uint4*>(dq)[i] = out;
}

template <int D, int BR>
__global__ void __launch_bounds__(THREADS) key_tile_kernel(Params p) {
    using L = Smem<D, BR>;
    constexpr int NB = BR / 8;  // n8 blocks of query rows in Sᵀ and dPᵀ
    constexpr int DN = D / 8;   // n8 blocks of head dims in dK and dV
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __nv_bfloat16* sm = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    float* lse_s = reinterpret_cast<float*>(sm + L::HALVES);  // [2][BR], lse·log2(e) (+∞ past Sq)
    float* delta_s = lse_s + 2 * BR;                          // [2][BR]

    const long long bh = attn::head_of_block();
    if (bh >= p.BH) return;
    const int kb = blockIdx.x * BC, warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int off = p.Sk - p.Sq;  // causal: row i sees keys ≤ i + off
    const __nv_bfloat16 *q = p.q + bh * p.Sq * D, *dout = p.dout + bh * p.Sq * D;
    const float *lse = p.lse + bh * p.Sq, *delta = p.delta + bh * p.Sq;
    float* dq_accum = p.dq_accum + bh * p.Sq * D;

    // The query tiles whose rows see a key of this tile: all of them, or (causal) from the first row i with
    // i + off ≥ kb.
    const int first_row = p.causal ? max(0, kb - off) : 0;
    const int i_begin = first_row / BR * BR, n_tiles = first_row >= p.Sq ? 0 : (p.Sq - i_begin + BR - 1) / BR;

    load_tile<D, BC>(sm + L::K, p.k + bh * p.Sk * D, kb, p.Sk);
    load_tile<D, BC>(sm + L::V, p.v + bh * p.Sk * D, kb, p.Sk);
    auto load_rows = [&](int tile, int buf) {
        const int ib = i_begin + tile * BR;
        load_tile<D, BR>(sm + L::Q + buf * BR * D, q, ib, p.Sq);
        load_tile<D, BR>(sm + L::DO + buf * BR * D, dout, ib, p.Sq);
        for (int r = threadIdx.x; r < BR; r += THREADS) {
            const bool in = ib + r < p.Sq;
            lse_s[buf * BR + r] = in ? lse[ib + r] * kLog2e : INFINITY;
            delta_s[buf * BR + r] = in ? delta[ib + r] : 0.0f;
        }
    };
    if (n_tiles > 0) load_rows(0, 0);
    cp_async_commit();

    float dk[DN][4] = {}, dv[DN][4] = {};
    const int key_w = kb + 16 * warp;  // this warp's first key
    // ldmatrix lane addresses: A (row-major 16×16 at rows r0, chunk c0): row r0 + (lane%8) + 8·((lane/8)%2), chunk
    // c0 + lane/16. B of two n8 blocks from a [n][k] tile (non-trans): row n0 + (lane%8) + 8·(lane/16), chunk
    // c0 + (lane/8)%2. The .trans forms from a [k][n] tile: row k0 + (lane%8) + 8·((lane/8)%2), chunk n0/8 + lane/16.
    const int a_row = (lane & 7) + 8 * ((lane >> 3) & 1), a_chunk = lane >> 4;
    const int b_row = (lane & 7) + 8 * (lane >> 4), b_chunk = (lane >> 3) & 1;

    for (int tile = 0; tile < n_tiles; ++tile) {
        const int buf = tile & 1, ib = i_begin + tile * BR;
        if (tile + 1 < n_tiles) load_rows(tile + 1, buf ^ 1);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const __nv_bfloat16 *Qs = sm + L::Q + buf * BR * D, *dOs = sm + L::DO + buf * BR * D;

        // Sᵀ and dPᵀ: this warp's 16 keys × BR rows
        float s[NB][4] = {}, dp[NB][4] = {};
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            unsigned ak[4], av[4];
            ldmatrix_x4(smem_u32(sm + L::K + swz<D>(16 * warp + a_row, 2 * kk + a_chunk)), ak[0], ak[1], ak[2], ak[3]);
            ldmatrix_x4(smem_u32(sm + L::V + swz<D>(16 * warp + a_row, 2 * kk + a_chunk)), av[0], av[1], av[2], av[3]);
#pragma unroll
            for (int np = 0; np < NB / 2; ++np) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4(smem_u32(Qs + swz<D>(16 * np + b_row, 2 * kk + b_chunk)), b0, b1, b2, b3);
                mma_bf16(s[2 * np], ak, b0, b1), mma_bf16(s[2 * np + 1], ak, b2, b3);
                ldmatrix_x4(smem_u32(dOs + swz<D>(16 * np + b_row, 2 * kk + b_chunk)), b0, b1, b2, b3);
                mma_bf16(dp[2 * np], av, b0, b1), mma_bf16(dp[2 * np + 1], av, b2, b3);
            }
        }
        // Pᵀ, then dSᵀ = Pᵀ∘(dPᵀ − δ). Element e of block nb: key key_w + g + 8·(e/2), row ib + 8nb + 2t + e%2.
        const bool edge = kb + BC > p.Sk || (p.causal && kb + BC - 1 > ib + off);
#pragma unroll
        for (int nb = 0; nb < NB; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = 8 * nb + 2 * t + (e & 1), key = key_w + g + 8 * (e >> 1);
                float pv = ex2(s[nb][e] * p.scale_log2 - lse_s[buf * BR + r]);
                if (edge && (key >= p.Sk || (p.causal && key > ib + r + off))) pv = 0.0f;
                s[nb][e] = pv;
                dp[nb][e] = pv * (dp[nb][e] - delta_s[buf * BR + r]);
            }
        // dV += Pᵀ·dO_i and dK += dSᵀ·Q_i: k runs over the tile's rows, 16 at a time
#pragma unroll
        for (int ks = 0; ks < BR / 16; ++ks) {
            unsigned ap[4], ad[4];
            a_fragment(ap, s, ks), a_fragment(ad, dp, ks);
            // dSᵀ to shared memory for dQ: rows 16ks … of this warp's keys
            __nv_bfloat16* dS = sm + L::DS;
            *reinterpret_cast<unsigned*>(dS + swz<BR>(16 * warp + g, 2 * ks) + 2 * t) = ad[0];
            *reinterpret_cast<unsigned*>(dS + swz<BR>(16 * warp + g + 8, 2 * ks) + 2 * t) = ad[1];
            *reinterpret_cast<unsigned*>(dS + swz<BR>(16 * warp + g, 2 * ks + 1) + 2 * t) = ad[2];
            *reinterpret_cast<unsigned*>(dS + swz<BR>(16 * warp + g + 8, 2 * ks + 1) + 2 * t) = ad[3];
#pragma unroll
            for (int dn = 0; dn < DN / 2; ++dn) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(smem_u32(dOs + swz<D>(16 * ks + a_row, 2 * dn + a_chunk)), b0, b1, b2, b3);
                mma_bf16(dv[2 * dn], ap, b0, b1), mma_bf16(dv[2 * dn + 1], ap, b2, b3);
                ldmatrix_x4_trans(smem_u32(Qs + swz<D>(16 * ks + a_row, 2 * dn + a_chunk)), b0, b1, b2, b3);
                mma_bf16(dk[2 * dn], ad, b0, b1), mma_bf16(dk[2 * dn + 1], ad, b2, b3);
            }
        }
        __syncthreads();  // dSᵀ complete

        // dQ_i += dS·K: the BR × D block in units of 16 rows × 16 dims, shared out among the warps
        constexpr int MB = BR / 16, WPM = WARPS / MB, NP = D / 16 / WPM;
        static_assert(WARPS % MB == 0 && (D / 16) % WPM == 0, "warps divide the dQ block");
        const int mb = warp % MB, np0 = (warp / MB) * NP;
        unsigned a[BC / 16][4];
#pragma unroll
        for (int ks = 0; ks < BC / 16; ++ks)  // A = dS (rows × keys) from dSᵀ (keys × rows): .trans, matrices by lane/8
            ldmatrix_x4_trans(smem_u32(sm + L::DS + swz<BR>(16 * ks + (lane & 7) + 8 * (lane >> 4), 2 * mb + ((lane >> 3) & 1))),
                      a[ks][0], a[ks][1], a[ks][2], a[ks][3]);
        const int row_lo = ib + 16 * mb + g, row_hi = row_lo + 8;
#pragma unroll
        for (int np = np0; np < np0 + NP; ++np) {
            float acc[2][4] = {};
#pragma unroll
            for (int ks = 0; ks < BC / 16; ++ks) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(smem_u32(sm + L::K + swz<D>(16 * ks + a_row, 2 * np + a_chunk)), b0, b1, b2, b3);
                mma_bf16(acc[0], a[ks], b0, b1), mma_bf16(acc[1], a[ks], b2, b3);
            }
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int col = 16 * np + 8 * j + 2 * t;
#if __CUDA_ARCH__ >= 900
                if (row_lo < p.Sq) atomicAdd(reinterpret_cast<float2*>(dq_accum + size_t(row_lo) * D + col), make_float2(acc[j][0], acc[j][1]));
                if (row_hi < p.Sq) atomicAdd(reinterpret_cast<float2*>(dq_accum + size_t(row_hi) * D + col), make_float2(acc[j][2], acc[j][3]));
#else
                if (row_lo < p.Sq) atomicAdd(dq_accum + size_t(row_lo) * D + col, acc[j][0]), atomicAdd(dq_accum + size_t(row_lo) * D + col + 1, acc[j][1]);
                if (row_hi < p.Sq) atomicAdd(dq_accum + size_t(row_hi) * D + col, acc[j][2]), atomicAdd(dq_accum + size_t(row_hi) * D + col + 1, acc[j][3]);
#endif
            }
        }
        // the next iteration's first __syncthreads keeps its dSᵀ and buffer writes after these reads
    }
    cp_async_wait<0>();

    // dK (× 1/√D) and dV in bf16, keys below Sk
#pragma unroll
    for (int dn = 0; dn < DN; ++dn)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int key = key_w + g + 8 * h;
            if (key >= p.Sk) continue;
            const size_t at = (bh * p.Sk + key) * D + 8 * dn + 2 * t;
            *reinterpret_cast<unsigned*>(p.dk + at) = pack_bf16(dk[dn][2 * h] * p.scale, dk[dn][2 * h + 1] * p.scale);
            *reinterpret_cast<unsigned*>(p.dv + at) = pack_bf16(dv[dn][2 * h], dv[dn][2 * h + 1]);
        }
}

// Rung 1's key tiles (sm_80 and anything hopper_key_tiles declines).
template <int D, int BR>
void launch_key_tiles(const Params& p) {
    static const bool attr = [] {  // once per instantiation: its shared memory is above the default 48 KB
        CUDA_CHECK(cudaFuncSetAttribute(key_tile_kernel<D, BR>, cudaFuncAttributeMaxDynamicSharedMemorySize, Smem<D, BR>::BYTES));
        return true;
    }();
    (void)attr;
    key_tile_kernel<D, BR><<<attn::grid_over_heads(unsigned((p.Sk + BC - 1) / BC), p.BH), THREADS, Smem<D, BR>::BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
}

// Rung 2, the key tiles on wgmma and TMA (flash_attention_bf16_backward_sm90.cu): whether it runs here (a compute
// capability 9.0 GPU, an sm_90a build, D = 64 or 128, pointers TMA takes: q, k, v, dout read, dk, dv written), and the
// key tiles with dQ, from δ on: it keeps dQ's accumulator itself, in the order its fragments add to it, and writes dQ
// in bf16.
bool hopper_key_tiles_run_here(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* dout,
                               const __nv_bfloat16* dk, const __nv_bfloat16* dv, long long BH, int D);
void hopper_key_tiles(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* dout,
                      const float* lse, const float* delta, __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv, long long BH,
                      int Sq, int Sk, int D, bool causal);

template <int D, int BR>
void run(const Params& base, const __nv_bfloat16* o, __nv_bfloat16* dq) {
    const long long rows = base.BH * base.Sq;
    const bool hopper = hopper_key_tiles_run_here(base.q, base.k, base.v, base.dout, base.dk, base.dv, base.BH, D);
    attn::StreamScratch delta{size_t(rows)}, accum{hopper ? 0 : size_t(rows) * D};  // δ, rung 1's dQ accumulator
    Params p = base;
    p.delta = delta.p, p.dq_accum = accum.p;
    constexpr int RPB = 256 / (D / 8);
    row_term_kernel<D><<<unsigned((rows + RPB - 1) / RPB), 256>>>(o, p.dout, delta.p, accum.p, rows);
    CUDA_CHECK_LAUNCH();
    if (hopper) {
        hopper_key_tiles(p.q, p.k, p.v, p.dout, p.lse, p.delta, dq, p.dk, p.dv, p.BH, p.Sq, p.Sk, D, p.causal);
        return;
    }
    launch_key_tiles<D, BR>(p);
    const long long n8 = rows * D / 8;
    dq_convert_kernel<<<unsigned((n8 + 255) / 256), 256>>>(accum.p, dq, n8, p.scale);
    CUDA_CHECK_LAUNCH();
}

}  // namespace bf16_bwd_detail

#else
// ------------------------------------------------------------------------------------------------
// The plan (task4_bf16_backward/README.md, "The plan"): FlashAttention-2's Algorithm 2 on the tensor cores.
// Three kernels on the default stream:
//   row_term_kernel   δ_i = Σ_d dO_id·O_id in float32 for every row; dQ's float32 accumulator (a scratch buffer of
//                     B·H·Sq·D floats: cudaMallocAsync / cudaFreeAsync on stream 0) set to zero.
//   key_tile_kernel   one block per 64 keys of one (batch, head) — grid attn::grid_over_heads(ceil(Sk/64), B·H),
//                     the head is attn::head_of_block() — 4 warps, warp w owning keys 16w … 16w+15, their dK and
//                     dV (16 × D float32 each) in registers as mma C fragments for the whole walk.
//   dq_convert_kernel dQ = accumulator / √D, rounded to bf16.
//
// TODO(task4d.2) load the block's K and V tiles (64 × D bf16, zeros past Sk) into shared memory.
// TODO(task4d.3) walk the query tiles of 64 rows (causal: from the first row i with i + Sk − Sq ≥ the block's
//     first key): load Q_i and dO_i (zeros past Sq), lse_i·log2(e) (+∞ past Sq) and δ_i; then per warp, with
//     mma.sync.m16n8k16 (bf16 in, float32 out; A and B fragments by ldmatrix from shared memory):
//       Sᵀ = K·Q_iᵀ and dPᵀ = V·dO_iᵀ   (16 keys × 64 rows)
//       Pᵀ = exp2(Sᵀ·log2(e)/√D − lse·log2(e)), 0 where masked (key ≥ Sk, or causal and key > row + Sk − Sq)
//       dSᵀ = Pᵀ∘(dPᵀ − δ)               (float32)
// TODO(task4d.4) dV += Pᵀ·dO_i and dK += dSᵀ·Q_i: Pᵀ and dSᵀ rounded to bf16 are already mma A fragments (the C
//     layout of two n8 blocks is the A layout of one k16 block); dO_i and Q_i by ldmatrix.trans.
// TODO(task4d.5) dQ_i += dS·K: store dSᵀ to shared memory, __syncthreads(), each warp computes a share of the
//     64 × D block and adds it to the accumulator with atomicAdd (other key tiles add into the same rows at the
//     same time: a plain += loses updates). __syncthreads() before the next tile overwrites the buffers.
// TODO(task4d.6) write dK / √D and dV in bf16 for the keys below Sk (a key that no row sees: zeros).
// Every accumulation stays in float32: only the mma operands (P, dS, the inputs) and the outputs are bf16.
// ------------------------------------------------------------------------------------------------
#endif

void flash_attention_backward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* o, const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq,
                                   __nv_bfloat16* dk, __nv_bfloat16* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
#if SOLUTION
    using namespace bf16_bwd_detail;
    const char* fn = "flash_attention_backward_bf16";
    if (D != 32 && D != 64 && D != 128)
        throw std::invalid_argument(std::string(fn) + ": head_dim " + std::to_string(D) + " is not supported (32, 64 or 128)");
    for (const auto& [name, value] : {std::pair{"B", B}, std::pair{"H", H}, std::pair{"Sq", Sq}, std::pair{"Sk", Sk}})
        if (value <= 0)
            throw std::invalid_argument(std::string(fn) + ": " + name + " = " + std::to_string(value) + " (sizes must be positive)");
    for (const auto& [name, ptr] : {std::pair<const char*, const void*>{"q", q}, {"k", k}, {"v", v}, {"o", o}, {"dout", dout},
                                    {"lse", lse}, {"dq", dq}, {"dk", dk}, {"dv", dv}}) {
        if (!ptr) throw std::invalid_argument(std::string(fn) + ": " + name + " is a null pointer");
        if (reinterpret_cast<uintptr_t>(ptr) % 16)
            throw std::invalid_argument(std::string(fn) + ": " + name + " is not 16-byte aligned (rows are read 8 bf16 at a time)");
    }
    attn::require_bf16_mma(fn);
    const double scale = 1.0 / std::sqrt(double(D));
    const Params p{q, k, v, dout, lse, nullptr, nullptr, dk, dv, Sq, Sk, causal, float(scale), float(1.4426950408889634 * scale),
                   (long long)B * H};
    switch (D) {
        case 32: return run<32, 64>(p, o, dq);
        case 64: return run<64, 64>(p, o, dq);
        default: return run<128, 64>(p, o, dq);
    }
#else
    // TODO(task4d.1): validate (D ∈ {32, 64, 128}; sizes positive; pointers set: std::invalid_argument naming the
    // argument), then launch the three kernels of the plan above, CUDA_CHECK_LAUNCH() after each. Measure with
    // `make bench-task4-bf16-backward`; the README's ladder says what comes next.
    (void)q, (void)k, (void)v, (void)o, (void)dout, (void)lse, (void)dq, (void)dk, (void)dv, (void)B, (void)H, (void)Sq, (void)Sk,
        (void)D, (void)causal;
    ATTNLAB_TODO("task4d.1");
#endif
}

#if SOLUTION
namespace bf16_detail {  // 4b's checks and kernels, which write lse when given it (task4_bf16/reference/flash_attention_bf16.cu)
void forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, int B,
             int H, int Sq, int Sk, int D, bool causal, const std::string& who);
}
#endif

void flash_attention_forward_bf16_lse(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                      __nv_bfloat16* o, float* lse, int B, int H, int Sq, int Sk, int D, bool causal) {
#if SOLUTION
    if (!lse) throw std::invalid_argument("flash_attention_forward_bf16_lse: lse is a null pointer");
    bf16_detail::forward(q, k, v, o, lse, B, H, Sq, Sk, D, causal, "flash_attention_forward_bf16_lse");
#else
    // TODO(task4d.7), for training (attnlab.attention on bf16 tensors, make train-attnlab): your 4b forward that also
    // writes each row's log-sum-exp, lse = log Σ_j exp(s_ij/√D) over the keys the row sees: at the end of the row,
    // m + log(l) (with exp2 and m kept in log2 units, (m + log2 l)·ln 2), +∞ where l = 0. Simplest: give your 4b
    // kernel an lse pointer (null from flash_attention_forward_bf16: nothing written) and launch it from here
    // through a function of your 4b file declared here. A null lse throws std::invalid_argument naming it.
    (void)q, (void)k, (void)v, (void)o, (void)lse, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4d.7");
#endif
}

}  // namespace task4
