// Task 4, bonus part 4d — the Hopper (sm_90a) path of the bf16 backward's key tiles (interface:
// task4_bf16_backward/task4_bf16_backward.h).
//
// Build and run: as flash_attention_bf16_backward.cu (make task4-bf16-backward, make bench-task4-bf16-backward); the
// Makefile compiles this file for sm_80 + sm_90a (wgmma exists only for the "a" target) with -DATTNLAB_SM90A=1.
#if SOLUTION
// Rung 2 of 4d's ladder: the key-tile kernel of rung 1 (flash_attention_bf16_backward.cu) on wgmma and TMA. A block of
// two warpgroups owns BC = 128 keys of one (batch, head); warpgroup w owns keys 64w … 64w+63 and keeps their dK and
// dV (64 × D float32 each) in wgmma accumulators for the whole walk over the query tiles (BR = 64 rows at D = 128,
// 128 at D = 64). K and V arrive once by TMA; Q, dO and the tile's row terms (lse·log2 e, δ) arrive by TMA into three
// stages, two tiles ahead. Per query tile, each warpgroup:
//   Sᵀ  = K_w·Q_iᵀ, dPᵀ = V_w·dO_iᵀ   wgmma m64nBRk16, both operands K-major in shared memory; two groups, so that
//                                      Pᵀ's exponentials run while dPᵀ is on the tensor cores
//   Pᵀ, dSᵀ = Pᵀ∘(dPᵀ − δ)            in registers (float32), as rung 1; the masks (keys past Sk, causal) in a pass of
//                                      their own, only in the tiles that need them
//   dV += Pᵀ·dO_i                      wgmma with A from registers (the accumulator of Sᵀ is the A fragment of Pᵀ) and B
//                                      MN-major (dO_i as TMA left it: no transpose copy), issued before dSᵀ is stored
//   dSᵀ → shared memory, [keys][rows], 128-byte swizzled, by stmatrix: the A operand of dQ, MN-major
//   dQ_i += dS·K                       both operands MN-major; at D = 128 warpgroup w computes columns 64w … 64w+63
//                                      over all 128 keys, at D = 64 rows 64w … 64w+63 (one dQ a tile: no doubled adds)
//   dK += dSᵀ·Q_i                      A from registers, issued after dQ: it runs while dQ goes out
//   dQ → global                        each warp's own two 16 × 32 boxes of float32 in shared memory, added to the
//                                      float32 accumulator by the TMA unit (cp.reduce.async.bulk.tensor: one
//                                      instruction a box; the adds are atomic in L2)
// One block-wide barrier a tile (every dSᵀ row written, before dQ); each warpgroup waits for the other to finish
// reading its dSᵀ rows (named barriers 2 and 3) before it overwrites them; no other barrier. Causal, the blocks run
// longest first (the first keys see the most query tiles) within groups of heads whose Q and dO fit in L2 together.
// Measured step by step on an H100 (docs/perf.md, "The bf16 backward (4d), rung 2"): 345 → 491 TFLOP/s at B=4 H=16
// S=4096 D=128, 312 → 433 causal; the masks out of the exponentials' loop and dSᵀ by stmatrix ("the masks out of the
// loop"): 490 → 530 and 428 → 463 there, 417 → 485 at B=1 H=32 S=16384 D=64; wg and warp known warp-uniform: +2–4 %.
// flash_attention_bf16_backward.cu calls hopper_key_tiles first; it returns false (rung 1 runs) on anything but a
// compute capability 9.0 GPU, in a build without sm_90a, at D = 32, or for pointers TMA cannot take.
#include <cuda_bf16.h>

#include <algorithm>
#include <climits>

#include "common/cuda/grid.cuh"
#include "common/cuda/stream_scratch.h"
#include "task4_bf16/ladder/hopper_bf16.cuh"

namespace task4::bf16_bwd_detail {
namespace sm90 {

using namespace task4::hopper;
constexpr int BC = 128, THREADS = 256;
// Query rows a tile: 64 at D = 128 (the registers: dK and dV take 128 a thread), 128 at D = 64 (twice the work per
// barrier and per Q / dO tile).
template <int D>
constexpr int rows_per_tile() { return D == 128 ? 64 : 128; }

struct SmParams {
    CUtensorMap tq, tk, tv, tdo;  // boxes of [BR rows][64 columns] (Q, dO) and [128 rows][64 columns] (K, V)
    CUtensorMap tdq;              // dQ's float32 accumulator [BH][Sq][D] (zeroed by the row-term kernel), boxes of [16][32]
    const float2* terms;          // [BH][Sq_pad]: (lse·log2(e), δ) of each row; (+∞, 0) past Sq
    __nv_bfloat16 *dk, *dv;
    int Sq, Sk, Sq_pad;
    long long BH;
    int heads_per_group;  // causal: heads whose Q and dO (2·Sq·D bf16 each) fit in 16 MB together
    bool causal;
    float scale, scale_log2;  // 1/√D, log2(e)/√D
};

// Byte offsets in shared memory (from a 1024-byte-aligned base: the swizzle pattern assumes it).
template <int D>
struct Layout {
    static constexpr int BR = rows_per_tile<D>(), STAGES = 3;  // Q, dO and the row terms of three tiles
    static constexpr uint32_t KV_TILE = BC * D * 2, ROW_TILE = BR * D * 2;
    // dQ's float32 tile: each warp's 16 rows × 64 columns of it as two boxes of [16][32] (128-byte rows, swizzled as
    // the TMA unit reads them), 4 KB a warp
    static constexpr uint32_t DQ_WARP = 4096;
    static constexpr uint32_t K = 0, V = K + KV_TILE, Q = V + KV_TILE, DO = Q + STAGES * ROW_TILE, DS = DO + STAGES * ROW_TILE,
                              DQ = DS + BC * BR * 2, TERMS = DQ + 8 * DQ_WARP, BARS = TERMS + STAGES * BR * 8,
                              END = BARS + (1 + STAGES) * 8;
    static constexpr size_t BYTES = END + 1024;  // + the alignment of the base
    static_assert(BYTES <= 227 * 1024, "shared memory");
};

// (lse·log2(e), δ) of every row into a layout padded to whole tiles, so that a tile's row terms are one bulk copy.
__global__ void __launch_bounds__(256) pad_row_terms_kernel(const float* lse, const float* delta, float2* terms, long long BH,
                                                           int Sq, int Sq_pad) {
    const long long i = blockIdx.x * 256LL + threadIdx.x;
    if (i >= BH * Sq_pad) return;
    const long long bh = i / Sq_pad;
    const int r = int(i % Sq_pad);
    terms[i] = r < Sq ? make_float2(lse[bh * Sq + r] * 1.4426950408889634f, delta[bh * Sq + r]) : make_float2(INFINITY, 0.0f);
}

// bytes from global to shared memory by the TMA unit, counted on an mbarrier (16-byte aligned, a multiple of 16)
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}

// D += A·B, m64n64k16, A and B both MN-major in shared memory (A = dSᵀ stored [keys][rows], B = K stored [keys][D]):
// the transpose flags (the last two immediates) tell the tensor cores to read them the other way round.
__device__ __forceinline__ void wgmma_m64n64_mn_mn(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
#if ATTNLAB_SM90A_DEVICE
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(accumulate));
#else
    (void)d, (void)a, (void)b, (void)accumulate;
    __trap();
#endif
}

// A fragment's registers are read by the tensor cores until the wait: keeping them live to here stops the compiler
// from giving them to another value while an issued wgmma still reads them.
template <int N>
__device__ __forceinline__ void pin_fragments(uint32_t (&a)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(a[i][j])::"memory");
}

// The box at (column, row, head) of a float32 tensor += the box in shared memory, by the TMA unit (one instruction,
// asynchronous; the adds are atomic in L2 as atomicAdd's are; rows past the tensor's end are left out); commit closes
// this thread's group of them, wait_read<N> returns when at most N of its groups still read shared memory.
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, uint32_t src, int col, int row, int bh) {
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(map),
                 "r"(src), "r"(col), "r"(row), "r"(bh)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

template <int D>
__global__ void __launch_bounds__(THREADS, 1) key_tile_kernel_sm90(const __grid_constant__ SmParams p) {
#if ATTNLAB_SM90A_DEVICE
    using L = Layout<D>;
    constexpr int BR = L::BR, CB = D / 64, ST = L::STAGES;  // CB: 64-column blocks of a tile
    extern __shared__ unsigned char smem_raw[];
    const uint32_t raw = smem_u32(smem_raw), base = (raw + 1023) & ~1023u;
    const float2* terms_s = reinterpret_cast<const float2*>(smem_raw + (base - raw) + L::TERMS);  // [ST][BR]
    const uint32_t kv_bar = base + L::BARS, row_bar = kv_bar + 8;  // row_bar + 8·stage: a tile's Q, dO, row terms

    // Causal: the blocks in order of work, longest first (a block's query tiles fall with its first key), within
    // groups of heads whose Q and dO fit in L2 together, so that the short blocks come last and fill the gaps.
    long long bh = attn::head_of_block();
    int kblock = blockIdx.x;
    if (p.causal) {
        const long long u = bh * gridDim.x + blockIdx.x, per_group = (long long)p.heads_per_group * gridDim.x, group = u / per_group;
        const long long heads = min((long long)p.heads_per_group, p.BH - group * p.heads_per_group), w = u % per_group;
        kblock = int(w / heads), bh = group * p.heads_per_group + w % heads;
    }
    if (bh >= p.BH) return;
    // wg and warp broadcast from lane 0: the compiler then knows them warp-uniform and keeps what derives from them (the
    // shared-memory addresses, the wgmma descriptors) in uniform registers, not moved there before every wgmma (+2–4 %)
    const int kb = kblock * BC, wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0),
              warp = __shfl_sync(0xffffffffu, int(threadIdx.x / 32) % 4, 0), lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int off = p.Sk - p.Sq;  // causal: row i sees keys ≤ i + off
    const int first_row = p.causal ? max(0, kb - off) : 0;
    const int i_begin = first_row / BR * BR, n_tiles = first_row >= p.Sq ? 0 : (p.Sq - i_begin + BR - 1) / BR;

    auto load_rows = [&](int tile) {  // one thread: Q, dO and the row terms of a tile into stage tile % ST
        const int st = tile % ST, ib = i_begin + tile * BR;
        const uint32_t bar = row_bar + 8 * st;
        mbar_arrive_expect_tx(bar, 2 * L::ROW_TILE + BR * 8);
        for (int c = 0; c < CB; ++c) {
            tma_load_3d(base + L::Q + st * L::ROW_TILE + c * BR * 128, &p.tq, bar, 64 * c, ib, int(bh));
            tma_load_3d(base + L::DO + st * L::ROW_TILE + c * BR * 128, &p.tdo, bar, 64 * c, ib, int(bh));
        }
        bulk_load(base + L::TERMS + st * BR * 8, p.terms + bh * p.Sq_pad + ib, BR * 8, bar);
    };
    if (threadIdx.x == 0) {
        mbar_init(kv_bar, 1);
        for (int st = 0; st < ST; ++st) mbar_init(row_bar + 8 * st, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(kv_bar, 2 * L::KV_TILE);
        for (int c = 0; c < CB; ++c) {
            tma_load_3d(base + L::K + c * BC * 128, &p.tk, kv_bar, 64 * c, kb, int(bh));
            tma_load_3d(base + L::V + c * BC * 128, &p.tv, kv_bar, 64 * c, kb, int(bh));
        }
        for (int tile = 0; tile < 2 && tile < n_tiles; ++tile) load_rows(tile);
    }

    float dk[D / 2], dv[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.0f;
    const uint32_t k_rows = base + L::K + wg * 64 * 128, v_rows = base + L::V + wg * 64 * 128;  // this warpgroup's keys
    const int key0 = kb + 64 * wg + 16 * warp + g;  // the key of accumulator rows g (and g + 8)
    // dQ_i += dS·K, split between the warpgroups: at D = 128 columns 64w … 64w+63 (B: K's column block w), at D = 64
    // rows 64w … 64w+63 (A: dSᵀ's column block w); 128 keys either way, so each reads the other's rows of dSᵀ.
    const uint32_t dq_a = base + L::DS + (D == 128 ? 0 : wg * BC * 128), dq_b = base + L::K + (D == 128 ? wg * BC * 128 : 0);
    const int dq_row0 = (D == 128 ? 0 : 64 * wg) + 16 * warp, dq_col0 = D == 128 ? 64 * wg : 0;  // this warp's part
    mbar_wait(kv_bar, 0);

    for (int tile = 0; tile < n_tiles; ++tile) {
        const int st = tile % ST, ib = i_begin + tile * BR;
        const uint32_t sQ = base + L::Q + st * L::ROW_TILE, sDO = base + L::DO + st * L::ROW_TILE;
        const float2* terms = terms_s + st * BR;
        mbar_wait(row_bar + 8 * st, (tile / ST) & 1);

        // Sᵀ = K_w·Q_iᵀ and dPᵀ = V_w·dO_iᵀ (64 keys × BR rows), two groups: Pᵀ's exponentials run while dPᵀ is computed
        float s[BR / 2], dp[BR / 2];
        wgmma_fence();
        gemm_qk<D, BR, BC>(s, k_rows, sQ);
        wgmma_commit();
        gemm_qk<D, BR, BC>(dp, v_rows, sDO);
        wgmma_commit();
        wgmma_wait<1>();
        pin(s);
        // Element 4i + 2h + e: key key0 + 8h, row ib + 8i + 2t + e.
#pragma unroll
        for (int i = 0; i < BR / 8; ++i)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[4 * i + e] = ex2(fmaf(s[4 * i + e], p.scale_log2, -terms[8 * i + 2 * t + (e & 1)].x));
        // Keys past Sk and (causal) keys past a row's last visible one to 0, only in the tiles that hold such keys: the
        // whole block takes this branch or not, and inside it a compare and a select an element, no branch. (As a test
        // inside the exponentials' loop it cost 17 % of the warps' stall samples at D = 64: a branch and predicates an element.)
        if (kb + BC > p.Sk || (p.causal && kb + BC - 1 > ib + off)) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int key = key0 + 8 * h;  // visible from tile row row_from on
                const int row_from = key >= p.Sk ? INT_MAX : p.causal ? key - ib - off : INT_MIN;
#pragma unroll
                for (int i = 0; i < BR / 8; ++i)
#pragma unroll
                    for (int e2 = 0; e2 < 2; ++e2)
                        if (8 * i + 2 * t + e2 < row_from) s[4 * i + 2 * h + e2] = 0.0f;
            }
        }
        wgmma_wait<0>();
        pin(dp);
#pragma unroll
        for (int i = 0; i < BR / 8; ++i)
#pragma unroll
            for (int e = 0; e < 4; ++e) dp[4 * i + e] = s[4 * i + e] * (dp[4 * i + e] - terms[8 * i + 2 * t + (e & 1)].y);
        uint32_t pa[BR / 16][4], da[BR / 16][4];
        to_a_fragments<BR>(s, pa), to_a_fragments<BR>(dp, da);

        // dV += Pᵀ·dO_i (issued, not waited on)
        wgmma_fence();
        gemm_pv<D, BR>(dv, pa, sDO);
        wgmma_commit();

        // dSᵀ to shared memory, rows = this warpgroup's keys: fragment j of k-block kb2 holds rows g + 8(j%2), columns
        // 16kb2 + 8(j/2) + 2t. The other warpgroup's dQ of the tile before read these rows: wait for its word (named
        // barrier 2 + w: it arrives when its dQ is done, this warpgroup waits; none before the first tile).
        if (tile > 0) bar_sync(2 + wg, THREADS);
        // one stmatrix a k-block: the four 8 × 8 matrices of fragment j (rows 16warp + 8(j%2) …, columns 16kb2 + 8(j/2) …);
        // lane L gives the address of row L % 8 of matrix L / 8 (16 bytes: one chunk of the 128-byte swizzle)
#pragma unroll
        for (int kb2 = 0; kb2 < BR / 16; ++kb2) {
            const int j = lane / 8, row = 64 * wg + 16 * warp + 8 * (j & 1) + lane % 8, col = 16 * kb2 + 8 * (j >> 1);
            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(base + L::DS + sw128_offset<BC>(row, col)),
                         "r"(da[kb2][0]), "r"(da[kb2][1]), "r"(da[kb2][2]), "r"(da[kb2][3])
                         : "memory");
        }
        fence_proxy_async();
        bar_sync(1, THREADS);  // every warpgroup's dSᵀ rows written; every thread is past the tile before
        if (threadIdx.x == 0 && tile + 2 < n_tiles) load_rows(tile + 2);  // into the stage of the tile before

        const uint64_t ad = sw128_desc(dq_a, 64 * 128, 1024), bd = sw128_desc(dq_b, 64 * 128, 1024);
        float dq[32];
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < BC / 16; ++ks) wgmma_m64n64_mn_mn(dq, ad + ks * 16 * 128 / 16, bd + ks * 16 * 128 / 16, ks > 0);
        wgmma_commit();
        gemm_pv<D, BR>(dk, da, sQ);  // dK += dSᵀ·Q_i: runs on while dQ goes out
        wgmma_commit();
        wgmma_wait<1>();
        pin(dq), pin(dv);
        pin_fragments(pa);
        if (tile + 1 < n_tiles) bar_arrive(2 + (1 - wg), THREADS);  // done reading the other warpgroup's dSᵀ rows

        // This warp's 16 rows × 64 columns of dQ to its own two boxes, then one lane adds them to the accumulator
        // (asynchronously: it waits for those adds to have read shared memory only before the next tile writes there).
        // Element (r, c) of a box: 16-byte chunk c/4 of its 128-byte row r at chunk (c/4) ^ (r mod 8).
        const uint32_t dq_box = base + L::DQ + (4 * wg + warp) * L::DQ_WARP;
        if (lane == 0) bulk_wait_read<0>();
        __syncwarp();
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const int r = g + 8 * h, c = 8 * (i % 4) + 2 * t;
                const uint32_t at = dq_box + (i / 4) * 2048 + r * 128 + (((c / 4) ^ (r % 8)) * 16) + (c % 4) * 4;
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(dq[4 * i + 2 * h]), "f"(dq[4 * i + 2 * h + 1]) : "memory");
            }
        fence_proxy_async();  // the adds (the async proxy) read what these stores wrote
        __syncwarp();
        if (lane == 0) {
            tma_reduce_add_3d(&p.tdq, dq_box, dq_col0, ib + dq_row0, int(bh));
            tma_reduce_add_3d(&p.tdq, dq_box + 2048, dq_col0 + 32, ib + dq_row0, int(bh));
            bulk_commit();
        }
        wgmma_wait<0>();
        pin(dk);
        pin_fragments(da);
    }
    if (lane == 0) bulk_wait_all();  // shared memory stays until the last adds have read it

    // dK (× 1/√D) and dV in bf16, keys below Sk
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int key = key0 + 8 * h;
        if (key >= p.Sk) continue;
#pragma unroll
        for (int i = 0; i < D / 8; ++i) {
            const size_t at = (bh * p.Sk + key) * D + 8 * i + 2 * t;
            *reinterpret_cast<uint32_t*>(p.dk + at) = pack_bf16(dk[4 * i + 2 * h] * p.scale, dk[4 * i + 2 * h + 1] * p.scale);
            *reinterpret_cast<uint32_t*>(p.dv + at) = pack_bf16(dv[4 * i + 2 * h], dv[4 * i + 2 * h + 1]);
        }
    }
#else
    (void)p;
    __trap();
#endif
}

// dQ's float32 accumulator [BH][Sq][D] as a TMA tensor, reduced into in boxes of [16 rows][32 columns], 128-byte swizzled.
inline CUtensorMap dq_tensor_map(float* base, int BH, int rows, int D) {
    CUtensorMap map;
    const cuuint64_t dims[3] = {cuuint64_t(D), cuuint64_t(rows), cuuint64_t(BH)};
    const cuuint64_t strides[2] = {cuuint64_t(D) * 4, cuuint64_t(rows) * D * 4};
    const cuuint32_t box[3] = {32, 16, 1}, step[3] = {1, 1, 1};
    const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, base, dims, strides, box, step,
                                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for dQ's accumulator");
    return map;
}

template <int D>
void launch(const SmParams& p) {
    static const bool attr = [] {  // once per instantiation: above the default 48 KB of shared memory
        CUDA_CHECK(cudaFuncSetAttribute(key_tile_kernel_sm90<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Layout<D>::BYTES)));
        return true;
    }();
    (void)attr;
    key_tile_kernel_sm90<D><<<attn::grid_over_heads(unsigned((p.Sk + BC - 1) / BC), p.BH), THREADS, Layout<D>::BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace sm90

bool hopper_key_tiles(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* dout,
                      const float* lse, const float* delta, float* dq_accum, __nv_bfloat16* dk, __nv_bfloat16* dv, long long BH,
                      int Sq, int Sk, int D, bool causal) {
    using namespace sm90;
    if ((D != 64 && D != 128) || BH > INT_MAX || !device_is_sm90a() || !tma_aligned(q, k, v, dout)) return false;
    SmParams p;
    const int BR = D == 128 ? rows_per_tile<128>() : rows_per_tile<64>();
    p.tq = tensor_map(q, int(BH), Sq, D, BR), p.tdo = tensor_map(dout, int(BH), Sq, D, BR);
    p.tk = tensor_map(k, int(BH), Sk, D, BC), p.tv = tensor_map(v, int(BH), Sk, D, BC);
    p.tdq = dq_tensor_map(dq_accum, int(BH), Sq, D);
    p.dk = dk, p.dv = dv;
    p.heads_per_group = int(std::max<long long>(1, std::min<long long>(BH, (16ll << 20) / (4ll * Sq * D))));
    p.Sq = Sq, p.Sk = Sk, p.Sq_pad = (Sq + BR - 1) / BR * BR, p.BH = BH, p.causal = causal;
    const double scale = 1.0 / std::sqrt(double(D));
    p.scale = float(scale), p.scale_log2 = float(1.4426950408889634 * scale);
    const long long n_terms = BH * p.Sq_pad;
    attn::StreamScratch terms{size_t(2 * n_terms)};  // float2 each
    p.terms = reinterpret_cast<const float2*>(terms.p);
    pad_row_terms_kernel<<<unsigned((n_terms + 255) / 256), 256>>>(lse, delta, reinterpret_cast<float2*>(terms.p), BH, Sq, p.Sq_pad);
    CUDA_CHECK_LAUNCH();
    if (D == 64)
        launch<64>(p);
    else
        launch<128>(p);
    return true;
}

}  // namespace task4::bf16_bwd_detail
#else
// This file is empty in the student kit: the bonus is flash_attention_bf16_backward.cu. (It is compiled for sm_80 and
// sm_90a, so a Hopper-only path of your own — wgmma, TMA — may live here, called from there.)
#endif
