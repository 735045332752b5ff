// Task 4, bonus part 4d — the Hopper (sm_90a) path of the bf16 backward's key tiles (interface:
// task4_bf16_backward/task4_bf16_backward.h).
//
// Build and run: as flash_attention_bf16_backward.cu (make task4-bf16-backward, make bench-task4-bf16-backward); the
// Makefile compiles this file for sm_80 + sm_90a (wgmma exists only for the "a" target) with -DATTNLAB_SM90A=1.
#if SOLUTION
// Rung 2 of 4d's ladder: the key-tile kernel of rung 1 (flash_attention_bf16_backward.cu) on wgmma and TMA. A block of
// two warpgroups owns BC = 128 keys of one (batch, head); warpgroup w owns keys 64w … 64w+63 and keeps their dK and
// dV (64 × D float32 each) in wgmma accumulators for the whole walk over the query tiles (BR = 80 rows at D = 128, 64
// causal below 2,048 rows; 128 at D = 64: rows_per_tile). K and V arrive once by TMA; Q, dO and the tile's row terms
// (lse·log2 e, δ) arrive by TMA into three stages, two tiles ahead. Per query tile, each warpgroup:
//   Sᵀ  = K_w·Q_iᵀ, dPᵀ = V_w·dO_iᵀ   wgmma m64nBRk16, both operands K-major in shared memory; two groups, so that
//                                      Pᵀ's exponentials run while dPᵀ is on the tensor cores
//   Pᵀ, dSᵀ = Pᵀ∘(dPᵀ − δ)            in registers (float32), as rung 1; the masks (keys past Sk, causal) in a pass of
//                                      their own, only in the tiles that need them
//   dV += Pᵀ·dO_i                      wgmma with A from registers (the accumulator of Sᵀ is the A fragment of Pᵀ) and B
//                                      MN-major (dO_i as TMA left it: no transpose copy), issued before dSᵀ is stored;
//                                      at D = 64 before dPᵀ is waited for, so that it runs while dSᵀ is computed
//   dSᵀ → shared memory, [keys][rows], 128-byte swizzled, by stmatrix: the A operand of dQ, MN-major
//   dQ_i += dS·K                       both operands MN-major; at D = 128 warpgroup w computes columns 64w … 64w+63
//                                      over all 128 keys, at D = 64 rows 64w … 64w+63 (one dQ a tile: no doubled adds)
//     at BR = 80, transposed:          dS stored [rows][keys] (stmatrix .trans), dQᵀ_i += Kᵀ·dSᵀ, m64n80k16 with A = K's
//                                      column block w MN-major and B = dS K-major (80 rows are no multiple of M = 64)
//   dK += dSᵀ·Q_i                      A from registers, issued after dQ: it runs while dQ goes out
//   dQ → global                        added to a float32 accumulator straight from the registers: each warp's 16 × 64
//                                      floats as eight red.global.add.v4.f32 a thread, 512 contiguous bytes a warp each,
//                                      into an accumulator laid out in the fragments' order (dq_tiles_to_bf16_kernel
//                                      turns it into dQ); the adds are atomic in L2
// After the walk, dK and dV in bf16 go into K's and V's places in shared memory and out by TMA stores. At D = 64 up to
// 1,024 rows the kernel is persistent (PERSIST): a block an SM walks key blocks one after another, the next one's K, V
// and first Q, dO tiles loading while this one finishes (+5 % / +7 % causal at 16·32·1024·64, H200; level at 4,096 rows;
// at D = 128, where two K/V buffers leave room for two stages only, 4–14 % slower).
// One block-wide barrier a tile (every dSᵀ row written, before dQ); each warpgroup waits for the other to finish
// reading its dSᵀ rows (named barriers 2 and 3) before it overwrites them; no other barrier. Causal, the blocks run
// longest first (the first keys see the most query tiles) within groups of heads of about one wave of blocks.
// Measured step by step on an H100 (docs/perf.md, "The bf16 backward (4d), rung 2"): 345 → 491 TFLOP/s at B=4 H=16
// S=4096 D=128, 312 → 433 causal; the masks out of the exponentials' loop and dSᵀ by stmatrix ("the masks out of the
// loop"): 490 → 530 and 428 → 463 there, 417 → 485 at B=1 H=32 S=16384 D=64; wg and warp known warp-uniform: +2–4 %;
// dQ added from the registers, where it was staged in shared memory for the TMA unit's reduce: +3–6 % ("dQ from the
// registers"); 80-row query tiles at D = 128: +2.5–11 % ("80-row query tiles"); dK and dV out through shared memory by
// the TMA unit: +2–4 % at S = 4,096, +8–14 % at S = 1,024 ("dK and dV by TMA").
// flash_attention_bf16_backward.cu asks hopper_key_tiles_run_here first: false (rung 1 runs) on anything but a compute
// capability 9.0 GPU, in a build without sm_90a, at D = 32, or for pointers TMA cannot take.
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
// Query rows a tile: 128 at D = 64 (twice the work per barrier and per Q / dO tile); at D = 128 (dK and dV take 128
// registers a thread) 80, but 64 for a causal call of fewer than 2,048 rows. 80 rows give each barrier and each tile's
// waits 25 % more tensor-core work: +2.5 % at S = 1,024, +5 % at 4,096, +11 % at 16,384 non-causal, +2 % and +8 %
// causal at 4,096 and 16,384 (H100, docs/perf.md "80-row query tiles"); causal at 1,024 they lost 3 % (more of each
// tile is masked). dQ's 80 rows are no multiple of wgmma's 64-row M, so dQ is computed transposed there (dQᵀ = Kᵀ·dSᵀ,
// M = the warpgroup's 64 columns of D, N = 80 rows) from dS stored [rows][keys].
inline int rows_per_tile(int D, bool causal, int Sq) { return D == 64 ? 128 : causal && Sq < 2048 ? 64 : 80; }
template <int BR>
__host__ __device__ constexpr bool transposed_dq() { return BR == 80; }

struct SmParams {
    CUtensorMap tq, tk, tv, tdo;  // boxes of [BR rows][64 columns] (Q, dO) and [128 rows][64 columns] (K, V)
    CUtensorMap tdk, tdv;         // [128 rows][64 columns]: dK and dV leave as K and V came
    const float2* terms;          // [BH][Sq_pad] rows' lse·log2(e) and δ, (+∞, 0) past Sq; the layout: paired_row_terms
    float* dq_tiles;              // dQ's float32 accumulator, in the fragments' order (dq_tiles_to_bf16_kernel), zeroed
    int Sq, Sk, Sq_pad, n_tiles;  // n_tiles = Sq_pad / BR
    long long BH;
    int heads_per_group;  // causal: heads whose blocks are ordered together (causal_heads_per_group)
    bool causal;
    float scale, scale_log2;  // 1/√D, log2(e)/√D
    int key_blocks;      // persistent: key blocks a head, (Sk + BC − 1) / BC
    unsigned n_blocks;   // persistent: key blocks in all, BH · key_blocks (below 2³¹ where it runs)
};

// Byte offsets in shared memory (from a 1024-byte-aligned base: the swizzle pattern assumes it). Persistent (see the
// kernel), K and V have two buffers, [K V] each, so that the next key block's arrive while this one's are in use
// (195 KB at D = 64; at D = 128 there is no room for them beside three stages).
template <int D, int BR_, bool PERSIST = false>
struct Layout {
    static constexpr int BR = BR_, STAGES = 3, KV_BUFS = PERSIST ? 2 : 1;  // stages: Q, dO and the row terms of three tiles
    static constexpr uint32_t KV_TILE = BC * D * 2, ROW_TILE = BR * D * 2, KV_BUF = 2 * KV_TILE;
    static constexpr uint32_t K = 0, V = K + KV_TILE, Q = KV_BUFS * KV_BUF, DO = Q + STAGES * ROW_TILE, DS = DO + STAGES * ROW_TILE,
                              TERMS = DS + BC * BR * 2, BARS = TERMS + STAGES * BR * 8, SLOT = BARS + (KV_BUFS + STAGES) * 8,
                              END = SLOT + (PERSIST ? 8 : 0);  // SLOT: the next key block, for every thread
    static constexpr size_t BYTES = END + 1024;  // + the alignment of the base
    static_assert(BYTES <= 227 * 1024, "shared memory");
};

// How a tile's row terms lie: at D = 128 its BR values of lse·log2(e), then its BR values of δ, so that the key-tile
// kernel loads two adjacent rows' lse (or δ) as one 8 bytes: 16 loads a tile a thread instead of 32, each of which
// the exponentials waited for (+0.5–1.7 %, H200; docs/perf.md "4d beside FA4's backward under ncu"). At D = 64 the
// same lost 0.6–2 %, and each row's (lse·log2(e), δ) stay side by side.
template <int D>
__host__ __device__ constexpr bool paired_row_terms() { return D == 128; }

// The row terms of every row into a layout padded to whole tiles, so that a tile's row terms are one bulk copy; and
// dQ's accumulator (D floats a padded row) set to zero, a float4 a thread at a time across the grid.
template <int D, int BR>
__global__ void __launch_bounds__(256) pad_row_terms_kernel(const float* lse, const float* delta, float2* terms, float4* dq_tiles,
                                                           long long BH, int Sq, int Sq_pad) {
    const long long i = blockIdx.x * 256LL + threadIdx.x, n = BH * Sq_pad, stride = (long long)gridDim.x * 256;
    for (long long z = i; z < n * (D / 4); z += stride) dq_tiles[z] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (i >= n) return;
    const long long bh = i / Sq_pad;
    const int r = int(i % Sq_pad);
    const float lse2 = r < Sq ? lse[bh * Sq + r] * 1.4426950408889634f : INFINITY, d = r < Sq ? delta[bh * Sq + r] : 0.0f;
    if constexpr (paired_row_terms<D>()) {
        float* tile = reinterpret_cast<float*>(terms + (i - r % BR));  // BR lse values, then BR δ values
        tile[r % BR] = lse2, tile[BR + r % BR] = d;
    } else {
        terms[i] = make_float2(lse2, d);
    }
}

// dQ's accumulator, in the fragments' order. A query tile's BR × D floats are eight pieces of 1024, one a warp w8 = 4·wg + warp
// of the key-tile kernel: its 16 rows × 64 columns, rows row0(w8) …, columns col0(w8) … (at D = 128 the warpgroup picks
// the columns, at D = 64 the rows: the kernel's split of dQ). Float 4k + e of lane L's quarter-piece k, at
// 128k + 4L + e, is that lane's accumulator element dq[4k + e]: row g + 8(e / 2), column 8k + 2t + e % 2 (g = L / 4,
// t = L % 4). So each thread adds its 32 floats as eight float4s, and a warp's eight adds cover 512 contiguous bytes each.
template <int D>
__host__ __device__ constexpr int dq_piece_row0(int w8) { return (D == 128 ? 0 : 64 * (w8 / 4)) + 16 * (w8 % 4); }
template <int D>
__host__ __device__ constexpr int dq_piece_col0(int w8) { return D == 128 ? 64 * (w8 / 4) : 0; }

// dQ = accumulator / √D in bf16, [BH][Sq][D]: a block a query tile, a warp a piece. Each lane reads its eight float4s,
// writes them as bf16 into a [16][64] tile in shared memory (16-byte chunks swizzled by row, so that neither side
// conflicts), and the warp writes the tile's rows below Sq out 16 bytes a lane.
template <int D, int BR>
__global__ void __launch_bounds__(256) dq_tiles_to_bf16_kernel(const float* dq_tiles, __nv_bfloat16* dq, int Sq, int n_tiles,
                                                              long long BH, float scale) {
    __shared__ __align__(16) uint32_t tile[8][16 * 32];  // a warp's 16 rows × 64 bf16
    const long long bh = attn::head_of_block();
    if (bh >= BH) return;
    const int w8 = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const float4* piece = reinterpret_cast<const float4*>(dq_tiles + ((bh * n_tiles + blockIdx.x) * 8 + w8) * 1024);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const float4 a = piece[32 * k + lane];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = g + 8 * h;
            tile[w8][r * 32 + ((k ^ (r % 8)) * 4) + t] = h ? pack_bf16(a.z * scale, a.w * scale) : pack_bf16(a.x * scale, a.y * scale);
        }
    }
    __syncwarp();
    const int row_base = blockIdx.x * BR + dq_piece_row0<D>(w8), col0 = dq_piece_col0<D>(w8);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
        const int j = lane + 32 * m, r = j / 8, q = j % 8;  // row r's 16-byte chunk q (8 columns)
        if (row_base + r >= Sq) continue;
        *reinterpret_cast<uint4*>(dq + (bh * Sq + row_base + r) * D + col0 + 8 * q) =
            *reinterpret_cast<const uint4*>(&tile[w8][r * 32 + ((q ^ (r % 8)) * 4)]);
    }
}

// The same for the transposed dQ (80-row tiles, D = 128): piece w8 = 4·wg + warp holds columns 64wg + 16warp … + 15 of
// the tile's BR rows, lane L's float4 k being its dQᵀ elements 4k … 4k+3: columns g, g, g + 8, g + 8 of the piece,
// rows 8k + 2t, 8k + 2t + 1, 8k + 2t, 8k + 2t + 1. The block gathers the tile as [rows][D] floats in shared memory
// (a column of padding against bank conflicts), then writes its rows below Sq 16 bytes a thread.
template <int BR>
__global__ void __launch_bounds__(256) dq_t_tiles_to_bf16_kernel(const float* dq_tiles, __nv_bfloat16* dq, int Sq, int n_tiles,
                                                                long long BH, float scale) {
    constexpr int D = 128;
    __shared__ float tile[BR][D + 1];
    const long long bh = attn::head_of_block();
    if (bh >= BH) return;
    const int w8 = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, col = 64 * (w8 / 4) + 16 * (w8 % 4) + g;
    const float4* piece = reinterpret_cast<const float4*>(dq_tiles + ((bh * n_tiles + blockIdx.x) * 8 + w8) * (BR * D / 8));
#pragma unroll
    for (int k = 0; k < BR / 8; ++k) {
        const float4 a = piece[32 * k + lane];
        const int r = 8 * k + 2 * t;
        tile[r][col] = a.x, tile[r + 1][col] = a.y, tile[r][col + 8] = a.z, tile[r + 1][col + 8] = a.w;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < BR * (D / 8); j += 256) {
        const int r = j / (D / 8), c = 8 * (j % (D / 8)), row = blockIdx.x * BR + r;
        if (row >= Sq) continue;
        const float* x = &tile[r][c];
        const uint4 v = make_uint4(pack_bf16(x[0] * scale, x[1] * scale), pack_bf16(x[2] * scale, x[3] * scale),
                                   pack_bf16(x[4] * scale, x[5] * scale), pack_bf16(x[6] * scale, x[7] * scale));
        *reinterpret_cast<uint4*>(dq + (bh * Sq + row) * D + c) = v;
    }
}

// Row `row` + `odd` of a tile's row terms in shared memory (row even; pad_row_terms_kernel's layout): its lse·log2(e),
// or (DELTA) its δ.
template <int D, int BR, bool DELTA>
__device__ __forceinline__ float row_term(const float2* terms, int row, int odd) {
    if constexpr (!paired_row_terms<D>()) return DELTA ? terms[row + odd].y : terms[row + odd].x;
    const float2 pair = *reinterpret_cast<const float2*>(reinterpret_cast<const float*>(terms) + (DELTA ? BR : 0) + row);
    return odd ? pair.y : pair.x;
}

// *at += v (four floats, 16-byte aligned), atomically in L2, nothing returned.
__device__ __forceinline__ void red_add_v4(float* at, float a, float b, float c, float d) {
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(at), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
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
// from giving them to another value while an issued wgmma still reads them — in the PTX. The asm is empty, so ptxas
// sees no use; it guards the registers itself, by waiting before it reuses them, a wait it may move earlier than the
// source's. hold_fragments (hopper_bf16.cuh) is the form ptxas keeps: the early dV below needs it.
template <int N>
__device__ __forceinline__ void pin_fragments(uint32_t (&a)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) asm volatile("" : "+r"(a[i][j])::"memory");
}


// The persistent kernel's scheduler, as 4b's (task4_bf16/ladder/persistent_bf16.cuh): a block's first key block is
// blockIdx.x, each next one comes from the first counter; the last block to finish taking resets both for the next launch.
__device__ unsigned long long bwd_counters[2] = {0, 0};

// Causal: the u-th key block (u = head · key_blocks + block) in order of work, longest first (a block's query tiles
// fall with its first key), within groups of heads of about one wave of blocks (causal_heads_per_group), so that the
// short blocks come last and fill the gaps.
// I: long long a block a key block; unsigned persistent (key_block_of says why).
template <class I>
__device__ __forceinline__ void causal_order(const SmParams& p, I u, I key_blocks, long long& bh, int& kblock) {
    const I per_group = I(p.heads_per_group) * key_blocks, group = u / per_group;
    const I heads = min(I(p.heads_per_group), I(p.BH) - group * I(p.heads_per_group)), w = u % per_group;
    kblock = int(w / heads), bh = (long long)(group * I(p.heads_per_group) + w % heads);
}

// Key block u (0 … n_blocks − 1) of the persistent kernel, in the grid's order. In 32 bits: a 64-bit division is a
// subroutine call, and with calls in the kernel ptxas kept the key-block state, and with it every stage address and wgmma
// descriptor of the tiles, in ordinary registers, moved to uniform ones before each wgmma (48 R2UR in the tile loop;
// 5,682 warp instructions a query tile against 4,997): 3–4 % slower at 16·32·1024·64, 4–5 % at 4·32·4096·64 (H200;
// docs/perf.md, "4d persistent: the key blocks' numbers in 32 bits").
__device__ __forceinline__ void key_block_of(const SmParams& p, unsigned u, long long& bh, int& kblock) {
    const unsigned key_blocks = unsigned(p.key_blocks);
    bh = u / key_blocks, kblock = int(u % key_blocks);
    if (p.causal) causal_order<unsigned>(p, u, key_blocks, bh, kblock);
}

// The query tiles key block kb (its first key) walks: from the tile of its first visible row (causal), to Sq.
template <int BR>
__device__ __forceinline__ void query_tiles_of(const SmParams& p, int kb, int off, int& i_begin, int& n_tiles) {
    const int first_row = p.causal ? max(0, kb - off) : 0;  // off = Sk − Sq: row i sees keys ≤ i + off
    i_begin = first_row / BR * BR, n_tiles = first_row >= p.Sq ? 0 : (p.Sq - i_begin + BR - 1) / BR;
}

// PERSIST: one block an SM, walking key blocks one after another. Why: a block of this kernel holds its SM alone (its
// shared memory), and a block a key block starts from nothing — K and V loaded and waited for, 1.2–1.8 µs — and ends
// with dK and dV stored, about 1 µs, with nothing beside them: 11–13 % of a block of 8 tiles (docs/perf.md, "4d's
// causal blocks"). Persistent, the next key block's K and V load into the second buffer during this one's first tile,
// its first query tiles' Q and dO during this one's last, and dK and dV leave by TMA while it starts. Without PERSIST the
// code below is the kernel as it was, a block a key block (the `if constexpr` branches leave it unchanged).
template <int D, int BR, bool PERSIST>
__global__ void __launch_bounds__(THREADS, 1) key_tile_kernel_sm90(const __grid_constant__ SmParams p) {
#if ATTNLAB_SM90A_DEVICE
    using L = Layout<D, BR, PERSIST>;
    constexpr int CB = D / 64, ST = L::STAGES;  // CB: 64-column blocks of a tile
    constexpr bool DQ_T = transposed_dq<BR>();  // dQᵀ = Kᵀ·dSᵀ, dS stored [rows][keys]
    extern __shared__ unsigned char smem_raw[];
    const uint32_t raw = smem_u32(smem_raw), base = (raw + 1023) & ~1023u;
    const float2* terms_s = reinterpret_cast<const float2*>(smem_raw + (base - raw) + L::TERMS);  // [ST][BR]
    volatile long long* next_slot = reinterpret_cast<volatile long long*>(smem_raw + (base - raw) + L::SLOT);  // PERSIST
    const uint32_t kv_bar = base + L::BARS, row_bar = kv_bar + 8 * L::KV_BUFS;  // + 8·buffer: K, V; + 8·stage: Q, dO, row terms

    long long bh;
    int kblock;
    if constexpr (PERSIST) {
        key_block_of(p, blockIdx.x, bh, kblock);  // the grid has no more blocks than key blocks
    } else {
        bh = attn::head_of_block();
        kblock = blockIdx.x;
        if (p.causal) causal_order<long long>(p, bh * gridDim.x + blockIdx.x, gridDim.x, bh, kblock);
        if (bh >= p.BH) return;
    }
    // wg and warp broadcast from lane 0: the compiler then knows them warp-uniform and keeps what derives from them (the
    // shared-memory addresses, the wgmma descriptors) in uniform registers, not moved there before every wgmma (+2–4 %)
    int kb = kblock * BC;  // (this and what follows change from key block to key block when PERSIST)
    const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0), warp = __shfl_sync(0xffffffffu, int(threadIdx.x / 32) % 4, 0),
              lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int off = p.Sk - p.Sq;  // causal: row i sees keys ≤ i + off
    int i_begin, n_tiles;
    query_tiles_of<BR>(p, kb, off, i_begin, n_tiles);

    // One thread: Q, dO and the row terms of query tile `tile` of a key block (its head, its first row) into stage gt % ST
    // (gt = tile but when PERSIST: see g0 below).
    auto load_rows_at = [&](long long b_bh, int b_i_begin, int tile, int gt) {
        const int st = gt % ST, ib = b_i_begin + tile * BR;
        const uint32_t bar = row_bar + 8 * st;
        mbar_arrive_expect_tx(bar, 2 * L::ROW_TILE + BR * 8);
        for (int c = 0; c < CB; ++c) {
            tma_load_3d(base + L::Q + st * L::ROW_TILE + c * BR * 128, &p.tq, bar, 64 * c, ib, int(b_bh));
            tma_load_3d(base + L::DO + st * L::ROW_TILE + c * BR * 128, &p.tdo, bar, 64 * c, ib, int(b_bh));
        }
        bulk_load(base + L::TERMS + st * BR * 8, p.terms + b_bh * p.Sq_pad + ib, BR * 8, bar);
    };
    auto load_rows = [&](int tile) { load_rows_at(bh, i_begin, tile, tile); };  // this key block's, without PERSIST
    if (threadIdx.x == 0) {
        mbar_init(kv_bar, 1);
        if constexpr (PERSIST) mbar_init(kv_bar + 8, 1);
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
        for (int tile = 0; tile < ST - 1 && tile < n_tiles; ++tile) load_rows(tile);
    }

    // PERSIST: thread 0's view of what comes next. The block's query tiles are numbered on from key block to key block
    // (gt = g0 + tile), which gives each its stage (gt % ST) and its stage barrier's phase.
    unsigned next_u = p.n_blocks;  // the next key block (n_blocks: none)
    long long next_bh = 0;
    int next_kb = 0, next_i_begin = 0, next_n_tiles = 0, g0 = 0, issued = n_tiles < ST - 1 ? n_tiles : ST - 1;  // tiles loaded
    auto feed = [&](int limit, bool into_next) {  // tiles up to gt = limit − 1: this key block's, then (into_next) the next's
        for (; issued < limit; ++issued) {
            const bool mine = issued < g0 + n_tiles;
            if (!mine && !(into_next && next_u < p.n_blocks && issued < g0 + n_tiles + next_n_tiles)) break;
            load_rows_at(mine ? bh : next_bh, mine ? i_begin : next_i_begin, issued - g0 - (mine ? 0 : n_tiles), issued);
        }
    };
    auto next_kv_ahead = [&](int n) {  // the next key block's K and V into the other buffer, once the last dK, dV left it
        int kblock_next;
        if (next_u >= p.n_blocks) return;
        key_block_of(p, next_u, next_bh, kblock_next);
        next_kb = kblock_next * BC;
        query_tiles_of<BR>(p, next_kb, off, next_i_begin, next_n_tiles);
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        const uint32_t bar = kv_bar + 8 * ((n + 1) % 2), at = base + ((n + 1) % 2) * L::KV_BUF;
        mbar_arrive_expect_tx(bar, 2 * L::KV_TILE);
        for (int c = 0; c < CB; ++c) {
            tma_load_3d(at + L::K + c * BC * 128, &p.tk, bar, 64 * c, next_kb, int(next_bh));
            tma_load_3d(at + L::V + c * BC * 128, &p.tv, bar, 64 * c, next_kb, int(next_bh));
        }
    };

    for (int n = 0;; ++n) {  // key blocks done by this block; without PERSIST one
        const uint32_t kvb = PERSIST ? base + (n % 2) * L::KV_BUF : base;  // this key block's K and V
        if constexpr (PERSIST) {
            if (threadIdx.x == 0) {
                // the next key block, whichever block asks first; its answer is first used after the first tile (under
                // load an atomic takes microseconds, and thread 0's warpgroup would wait for it here: up to 1 % slower)
                next_u = unsigned(atomicAdd(&bwd_counters[0], 1ull)) + gridDim.x;
                feed(g0 + ST, false);
                if (n_tiles == 0) next_kv_ahead(n);
            }
        }

        float dk[D / 2], dv[D / 2];
#pragma unroll
        for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.0f;
        const uint32_t k_rows = kvb + L::K + wg * 64 * 128, v_rows = kvb + L::V + wg * 64 * 128;  // this warpgroup's keys
        const int key0 = kb + 64 * wg + 16 * warp + g;  // the key of accumulator rows g (and g + 8)
        // dQ_i += dS·K, split between the warpgroups: at D = 128 columns 64w … 64w+63 (B: K's column block w; transposed,
        // A: the same block as Kᵀ), at D = 64 rows 64w … 64w+63 (A: dSᵀ's column block w); 128 keys either way, so each
        // reads the other's keys of dS.
        const uint32_t dq_a = DQ_T ? kvb + L::K + wg * BC * 128 : base + L::DS + (D == 128 ? 0 : wg * BC * 128),
                       dq_b = DQ_T ? base + L::DS : kvb + L::K + (D == 128 ? wg * BC * 128 : 0);
        mbar_wait(PERSIST ? kv_bar + 8 * (n % 2) : kv_bar, PERSIST ? (n / 2) & 1 : 0);

        for (int tile = 0; tile < n_tiles; ++tile) {
            const int gt = PERSIST ? g0 + tile : tile, st = gt % ST, ib = i_begin + tile * BR;
            const uint32_t sQ = base + L::Q + st * L::ROW_TILE, sDO = base + L::DO + st * L::ROW_TILE;
            const float2* terms = terms_s + st * BR;
            mbar_wait(row_bar + 8 * st, (gt / ST) & 1);

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
                for (int e = 0; e < 4; ++e) s[4 * i + e] = ex2(fmaf(s[4 * i + e], p.scale_log2, -row_term<D, BR, false>(terms, 8 * i + 2 * t, e & 1)));
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
            // dV += Pᵀ·dO_i (issued, not waited on). At D = 64 it is issued before dPᵀ is waited for, so that it runs while
            // dSᵀ is computed: +0.4–1.2 % at S ≤ 4,096; at D = 128 (dK and dV in 128 registers) that order lost 4–6 %
            // (H200, docs/perf.md "P·V's wait after the softmax").
            constexpr bool DV_BEFORE_DP_WAIT = D == 64;
            uint32_t pa[BR / 16][4], da[BR / 16][4];
            auto issue_dv = [&] {
                to_a_fragments<BR>(s, pa);
                wgmma_fence();
                gemm_pv<D, BR>(dv, pa, sDO);
                wgmma_commit();
            };
            if constexpr (DV_BEFORE_DP_WAIT) {
                issue_dv();
                wgmma_wait<1>();
            } else {
                wgmma_wait<0>();
            }
            pin(dp);
#pragma unroll
            for (int i = 0; i < BR / 8; ++i)
#pragma unroll
                for (int e = 0; e < 4; ++e) dp[4 * i + e] = s[4 * i + e] * (dp[4 * i + e] - row_term<D, BR, true>(terms, 8 * i + 2 * t, e & 1));
            if constexpr (!DV_BEFORE_DP_WAIT) issue_dv();
            to_a_fragments<BR>(dp, da);

            // dSᵀ to shared memory, rows = this warpgroup's keys: fragment j of k-block kb2 holds rows g + 8(j%2), columns
            // 16kb2 + 8(j/2) + 2t. The other warpgroup's dQ of the tile before read these rows: wait for its word (named
            // barrier 2 + w: it arrives when its dQ is done, this warpgroup waits; none before the first tile).
            if (tile > 0) bar_sync(2 + wg, THREADS);
            // one stmatrix a k-block: the four 8 × 8 matrices of fragment j (rows 16warp + 8(j%2) …, columns 16kb2 + 8(j/2) …);
            // lane L gives the address of row L % 8 of matrix L / 8 (16 bytes: one chunk of the 128-byte swizzle). For the
            // transposed dQ, .trans stores each matrix transposed: dS as [rows][keys], stored row L % 8 = query row.
#pragma unroll
            for (int kb2 = 0; kb2 < BR / 16; ++kb2) {
                const int j = lane / 8, key = 64 * wg + 16 * warp + 8 * (j & 1), qrow = 16 * kb2 + 8 * (j >> 1);
                if constexpr (DQ_T) {
                    const uint32_t at = base + L::DS + sw128_offset<BR>(qrow + lane % 8, key);
                    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(at),
                                 "r"(da[kb2][0]), "r"(da[kb2][1]), "r"(da[kb2][2]), "r"(da[kb2][3])
                                 : "memory");
                } else {
                    const uint32_t at = base + L::DS + sw128_offset<BC>(key + lane % 8, qrow);
                    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(at),
                                 "r"(da[kb2][0]), "r"(da[kb2][1]), "r"(da[kb2][2]), "r"(da[kb2][3])
                                 : "memory");
                }
            }
            fence_proxy_async();
            bar_sync(1, THREADS);  // every warpgroup's dSᵀ rows written; every thread is past the tile before
            if constexpr (PERSIST) {
                if (threadIdx.x == 0) {
                    if (tile == 0) next_kv_ahead(n);
                    feed(g0 + tile + ST, true);  // up to tile + ST − 1, of this key block or the next: into the stage of the tile before
                }
            } else {
                if (threadIdx.x == 0 && tile + ST - 1 < n_tiles) load_rows(tile + ST - 1);  // into the stage of the tile before
            }

            constexpr int DQ_N = DQ_T ? BR : 64;  // dQ's accumulator: 64 × DQ_N a warpgroup
            float dq[DQ_N / 2];
            wgmma_fence();
            if constexpr (DQ_T) {
                const uint64_t ad = sw128_desc(dq_a, 64 * 128, 1024), bd = sw128_desc(dq_b, 16, 1024);
#pragma unroll
                for (int ks = 0; ks < BC / 16; ++ks)  // keys 16ks …: A 16 rows of K further, B dS's column block ks/4, 32 bytes a step
                    wgmma_m64n80<1, 0>(dq, ad + ks * 16 * 128 / 16, bd + ((ks / 4) * BR * 128 + (ks % 4) * 32) / 16, ks > 0);
            } else {
                const uint64_t ad = sw128_desc(dq_a, 64 * 128, 1024), bd = sw128_desc(dq_b, 64 * 128, 1024);
#pragma unroll
                for (int ks = 0; ks < BC / 16; ++ks) wgmma_m64n64_mn_mn(dq, ad + ks * 16 * 128 / 16, bd + ks * 16 * 128 / 16, ks > 0);
            }
            wgmma_commit();
            gemm_pv<D, BR>(dk, da, sQ);  // dK += dSᵀ·Q_i: runs on while dQ goes out
            wgmma_commit();
            wgmma_wait<1>();
            pin(dq), pin(dv);
            if constexpr (DV_BEFORE_DP_WAIT)
                hold_fragments(pa, p.Sk < 0);  // dV's A fragments in their registers until here, and no wait moved up
            else
                pin_fragments(pa);
            if (tile + 1 < n_tiles) bar_arrive(2 + (1 - wg), THREADS);  // done reading the other warpgroup's dSᵀ rows

            // This warp's 16 rows × 64 columns of dQ (transposed: its 16 columns × 80 rows) added to the accumulator from the
            // registers (dq_tiles_to_bf16_kernel and dq_t_tiles_to_bf16_kernel say the order): staged in shared memory for
            // the TMA unit instead, the stores alone cost 8–17 % (docs/perf.md).
            float* piece = p.dq_tiles + ((bh * p.n_tiles + tile + i_begin / BR) * 8 + 4 * wg + warp) * (BR * D / 8) + 4 * lane;
#pragma unroll
            for (int k = 0; k < DQ_N / 8; ++k) red_add_v4(piece + 128 * k, dq[4 * k], dq[4 * k + 1], dq[4 * k + 2], dq[4 * k + 3]);
            wgmma_wait<0>();
            pin(dk);
            pin_fragments(da);
        }

        // dK (× 1/√D) and dV in bf16 into K's and V's places in shared memory (the same swizzled [128 keys][64] blocks TMA
        // filled: every warpgroup is past its last read of them first), then out by the TMA unit, one box a column block
        // (keys past Sk are not written). Stored from the registers instead, 4 bytes a thread and 16 a row an instruction,
        // they made the call 2–4 % slower at S = 4,096 and 7–12 % at S = 1,024, where a block's walk over its query tiles is
        // short (docs/perf.md, "dK and dV by TMA").
        __syncthreads();
        const float dk_scale[2] = {p.scale, p.scale}, dv_scale[2] = {1.0f, 1.0f};
        store_fragment_bf16<D, BC>(kvb + L::K, dk, dk_scale, 64 * wg + 16 * warp + g, t);
        store_fragment_bf16<D, BC>(kvb + L::V, dv, dv_scale, 64 * wg + 16 * warp + g, t);
        fence_proxy_async();
        if constexpr (PERSIST) {
            if (threadIdx.x == 0) *next_slot = next_u;  // every thread reads it after the barrier
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int c = 0; c < CB; ++c) {
                tma_store_3d(&p.tdk, kvb + L::K + c * BC * 128, 64 * c, kb, int(bh));
                tma_store_3d(&p.tdv, kvb + L::V + c * BC * 128, 64 * c, kb, int(bh));
            }
            if constexpr (PERSIST)
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");  // waited for before the buffer is loaded again
            else
                tma_store_commit_and_wait();
        }
        if constexpr (!PERSIST) {
            break;
        } else {
            const unsigned u = unsigned(*next_slot);
            if (u >= p.n_blocks) break;
            key_block_of(p, u, bh, kblock);
            g0 += n_tiles;
            kb = kblock * BC;
            query_tiles_of<BR>(p, kb, off, i_begin, n_tiles);
        }
    }  // the key blocks
    if constexpr (PERSIST) {
        if (threadIdx.x == 0) {
            asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");  // the last stores have read shared memory
            __threadfence();
            if (atomicAdd(&bwd_counters[1], 1ull) == gridDim.x - 1)  // the last block to finish taking key blocks
                atomicExch(&bwd_counters[0], 0ull), atomicExch(&bwd_counters[1], 0ull);
        }
    }
#else
    (void)p;
    __trap();
#endif
}

// Causal: how many heads' blocks are ordered longest first together: about one wave of blocks (#SMs / key blocks a
// head, rounded down to a power of two), and no more heads than 16 MB of Q and dO hold. At 16·32·1024·64 the 16 MB
// bound alone gave 64 heads a group and 258 TFLOP/s, one wave 16 heads and 275; the wave rounded up instead (17 heads
// there, 5 at 4·16·4096·128) lost 2–3 % (H100, docs/perf.md "4d's causal blocks").
inline long long causal_heads_per_group(long long BH, int Sq, int Sk, int D) {
    const long long key_blocks = (Sk + BC - 1) / BC;
    long long wave = 1;
    while (2 * wave * key_blocks <= attn::sm_count()) wave *= 2;
    return std::max(1LL, std::min({BH, wave, (16LL << 20) / (4LL * Sq * D)}));
}

// The call at head_dim D: the row terms padded to whole tiles and dQ's accumulator zeroed, the key tiles, dQ in bf16.
template <int D, int BR, bool PERSIST>
void key_tiles(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* dout,
               const float* lse, const float* delta, __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv, long long BH,
               int Sq, int Sk, bool causal) {
    static const bool attr = [] {  // once per instantiation: above the default 48 KB of shared memory
        CUDA_CHECK(cudaFuncSetAttribute(key_tile_kernel_sm90<D, BR, PERSIST>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(Layout<D, BR, PERSIST>::BYTES)));
        return true;
    }();
    (void)attr;
    SmParams p;
    p.tq = tensor_map(q, int(BH), Sq, D, BR), p.tdo = tensor_map(dout, int(BH), Sq, D, BR);
    p.tk = tensor_map(k, int(BH), Sk, D, BC), p.tv = tensor_map(v, int(BH), Sk, D, BC);
    p.tdk = tensor_map(dk, int(BH), Sk, D, BC), p.tdv = tensor_map(dv, int(BH), Sk, D, BC);
    p.heads_per_group = int(causal_heads_per_group(BH, Sq, Sk, D));
    p.Sq = Sq, p.Sk = Sk, p.Sq_pad = (Sq + BR - 1) / BR * BR, p.n_tiles = p.Sq_pad / BR, p.BH = BH, p.causal = causal;
    p.key_blocks = (Sk + BC - 1) / BC, p.n_blocks = PERSIST ? unsigned(BH * p.key_blocks) : 0u;  // < 2³¹: the caller's check
    const double scale = 1.0 / std::sqrt(double(D));
    p.scale = float(scale), p.scale_log2 = float(1.4426950408889634 * scale);
    const long long n_terms = BH * p.Sq_pad;
    attn::StreamScratch terms{size_t(2 * n_terms)}, dq_tiles{size_t(n_terms) * D};  // float2 each; dQ's accumulator
    p.terms = reinterpret_cast<const float2*>(terms.p), p.dq_tiles = dq_tiles.p;
    pad_row_terms_kernel<D, BR><<<unsigned((n_terms + 255) / 256), 256>>>(lse, delta, reinterpret_cast<float2*>(terms.p),
                                                                      reinterpret_cast<float4*>(dq_tiles.p), BH, Sq, p.Sq_pad);
    CUDA_CHECK_LAUNCH();
    const dim3 grid = PERSIST ? dim3(unsigned(std::min<long long>(p.n_blocks, attn::sm_count())))
                              : attn::grid_over_heads(unsigned(p.key_blocks), BH);
    key_tile_kernel_sm90<D, BR, PERSIST><<<grid, THREADS, Layout<D, BR, PERSIST>::BYTES>>>(p);
    CUDA_CHECK_LAUNCH();
    if constexpr (transposed_dq<BR>())
        dq_t_tiles_to_bf16_kernel<BR><<<attn::grid_over_heads(unsigned(p.n_tiles), BH), 256>>>(dq_tiles.p, dq, Sq, p.n_tiles, BH, p.scale);
    else
        dq_tiles_to_bf16_kernel<D, BR><<<attn::grid_over_heads(unsigned(p.n_tiles), BH), 256>>>(dq_tiles.p, dq, Sq, p.n_tiles, BH, p.scale);
    CUDA_CHECK_LAUNCH();
}

}  // namespace sm90

bool hopper_key_tiles_run_here(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* dout,
                               const __nv_bfloat16* dk, const __nv_bfloat16* dv, long long BH, int D) {
    return (D == 64 || D == 128) && BH <= INT_MAX && sm90::device_is_sm90a() && sm90::tma_aligned(q, k, v, dout, dk, dv);
}

void hopper_key_tiles(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* dout,
                      const float* lse, const float* delta, __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv, long long BH,
                      int Sq, int Sk, int D, bool causal) {
    using namespace sm90;
    const int BR = rows_per_tile(D, causal, Sq);
    // Persistent at D = 64 up to 1,024 rows, where a key block walks 8 query tiles or fewer: H200, 16·32·1024·64
    // 420.3 → 441.7 TFLOP/s, causal 299.7 → 321.8 (+5.1 %, +7.4 %); at 4·32·4096·64 +0.5 % / 0.0 %, at 16,384 rows not
    // shown faster (−0.2 % / −5.4 %, inside the rounds' spread). At D = 128 (64-row tiles, two stages) it lost 3.7 % at
    // 16·16·1024·128 causal and 12–14 % at 4·16·4096·128 (docs/perf.md, "4d persistent: the key blocks' numbers in 32 bits").
    if (D == 64 && Sq <= 1024 && BH * ((Sk + BC - 1) / BC) < INT_MAX)  // key blocks numbered in 32 bits
        return key_tiles<64, 128, true>(q, k, v, dout, lse, delta, dq, dk, dv, BH, Sq, Sk, causal);
    const auto call = D == 64 ? key_tiles<64, 128, false> : BR == 64 ? key_tiles<128, 64, false> : key_tiles<128, 80, false>;
    call(q, k, v, dout, lse, delta, dq, dk, dv, BH, Sq, Sk, causal);
}

}  // namespace task4::bf16_bwd_detail
#else
// This file is empty in the student kit: the bonus is flash_attention_bf16_backward.cu. (It is compiled for sm_80 and
// sm_90a, so a Hopper-only path of your own — wgmma, TMA — may live here, called from there.)
#endif
