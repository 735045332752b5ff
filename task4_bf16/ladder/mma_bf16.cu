// mma_bf16.cu — rungs 2 and 3 of Task 4's bf16 ladder (course staff material, not in the student kit), timed by
// `make ladder-task4-bf16` beside rung 1 (wmma_bf16.cu) and the reference (rung 4, task4_bf16/reference/flash_attention_bf16.cu).
// Both rungs are FlashAttention-2's forward with mma.sync.aligned.m16n8k16 (bf16 in, fp32 out; the primitives are the
// reference's, task4_bf16/reference/bf16_mma.cuh). A block of WARPS warps owns BR = 16·WARPS query rows of one
// (batch, head); warp w owns rows 16w … 16w+15 and keeps, in registers, for the whole kernel:
//   qf[D/16][4]   its Q rows as mma A fragments (loaded once with ldmatrix)
//   of[D/8][4]    its output rows as mma C fragments (fp32)
//   m[2], l[2]    the running max (log2 units) and this thread's share of the running sum, for the
//                 two rows it touches: g = lane/4 and g+8 (C fragment layout of m16n8)
// Per key tile of BC keys: S = Q·Kᵀ into sf[BC/8][4] (B fragments of K by ldmatrix: K rows are the
// columns of Kᵀ), the online softmax on sf in registers (row max over the 4 lanes of a quad), then
// O += P·V with P taken straight from sf (the C layout of two n8 blocks is the A layout of one k16
// block) rounded to bf16, V's B fragments by ldmatrix.trans. The scores never leave the registers.
//   rung 2 (PIPELINED = false): plain rows, one buffer, synchronous 16-byte loads
//   rung 3 (PIPELINED = true):  K and V tiles XOR-swizzled (tile_offset) and double-buffered with cp.async
//                               (tile j+1 is in flight while tile j is computed); 4 or 8 warps
// Rung 4 (the reference) changes the rows a warp owns (32: each K/V fragment feeds 4 MMAs, not 2) and how addresses
// are formed; its header says why. The kernel's prologue (pointers, rows, causal key range) repeats rung 4's on
// purpose: one helper for both put rung 4's D=128 kernel at 76 bytes of spills instead of 68, and its speed rests
// on that register budget. Build and run: make ladder-task4-bf16 (course repository, a GPU).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "common/cuda/cuda_check.h"
#include "task4_bf16/ladder/ladder_bf16.h"
#include "task4_bf16/reference/bf16_mma.cuh"

namespace task4::bf16_detail {

// ROWS rows of a [len, D] matrix from row0 into a tile (zeros past len).
template <int D, int ROWS, int THREADS, bool ASYNC>
__device__ __forceinline__ void load_tile(__nv_bfloat16* tile, const __nv_bfloat16* src, int row0, int len) {
    constexpr int CPR = D / 8, CHUNKS = ROWS * CPR;
#pragma unroll
    for (int c = threadIdx.x; c < CHUNKS; c += THREADS) {
        const int r = c / CPR, ch = c % CPR;
        const bool valid = row0 + r < len;
        const __nv_bfloat16* s = src + size_t(valid ? row0 + r : 0) * D + ch * 8;
        __nv_bfloat16* d = tile + tile_offset<D, ASYNC>(r, ch);
        if constexpr (ASYNC) {
            cp_async16(smem_u32(d), s, valid);
        } else {
            *reinterpret_cast<uint4*>(d) = valid ? *reinterpret_cast<const uint4*>(s) : make_uint4(0, 0, 0, 0);
        }
    }
}

template <int D, int WARPS, int BC, bool PIPELINED>
__global__ void __launch_bounds__(WARPS * 32) flash_bf16_kernel(Params p) {
    constexpr int BR = 16 * WARPS, THREADS = WARPS * 32, STAGES = PIPELINED ? 2 : 1;
    constexpr int DK = D / 16, DN = D / 8, NB = BC / 8, KB = BC / 16;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    __nv_bfloat16* Ks = Qs + BR * D;              // STAGES × [BC][D]
    __nv_bfloat16* Vs = Ks + STAGES * BC * D;     // STAGES × [BC][D]

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

    load_tile<D, BR, THREADS, PIPELINED>(Qs, q, r0, p.Sq);
    if constexpr (PIPELINED) {
        cp_async_commit();
        if (n_tiles > 0) {
            load_tile<D, BC, THREADS, true>(Ks, k, 0, p.Sk);
            load_tile<D, BC, THREADS, true>(Vs, v, 0, p.Sk);
        }
        cp_async_commit();  // (possibly empty) group of tile 0
        cp_async_wait<1>();  // Q has landed
    }
    __syncthreads();

    // this warp's 16 Q rows as A fragments: lanes 0–15 address rows 0–15 at chunk 2kk, lanes 16–31 at 2kk+1
    unsigned qf[DK][4];
#pragma unroll
    for (int kk = 0; kk < DK; ++kk)
        ldmatrix_x4(smem_u32(Qs + tile_offset<D, PIPELINED>(warp * 16 + lane % 16, 2 * kk + lane / 16)), qf[kk][0],
                    qf[kk][1], qf[kk][2], qf[kk][3]);

    float of[DN][4];
#pragma unroll
    for (int n = 0; n < DN; ++n) of[n][0] = of[n][1] = of[n][2] = of[n][3] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    const int row_a = r0 + warp * 16 + g;  // this thread's rows: row_a and row_a + 8

    for (int j = 0; j < n_tiles; ++j) {
        const int c0 = j * BC;
        const int stage = PIPELINED ? (j & 1) : 0;
        if constexpr (PIPELINED) {
            if (j + 1 < n_tiles) {
                load_tile<D, BC, THREADS, true>(Ks + (stage ^ 1) * BC * D, k, c0 + BC, p.Sk);
                load_tile<D, BC, THREADS, true>(Vs + (stage ^ 1) * BC * D, v, c0 + BC, p.Sk);
                cp_async_commit();
                cp_async_wait<1>();  // tile j has landed; tile j+1 may still be in flight
            } else {
                cp_async_wait<0>();
            }
        } else {
            load_tile<D, BC, THREADS, false>(Ks, k, c0, p.Sk);
            load_tile<D, BC, THREADS, false>(Vs, v, c0, p.Sk);
        }
        __syncthreads();
        const __nv_bfloat16* Kt = Ks + stage * BC * D;
        const __nv_bfloat16* Vt = Vs + stage * BC * D;

        // S = Q·Kᵀ: B fragments of n-blocks 2nb and 2nb+1 from one ldmatrix.x4 (keys 16nb + lane%8 (+8 for
        // lanes 16–31), chunk 2kk (+1 for lanes 8–15 and 24–31))
        float sf[NB][4];
#pragma unroll
        for (int n = 0; n < NB; ++n) sf[n][0] = sf[n][1] = sf[n][2] = sf[n][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < DK; ++kk)
#pragma unroll
            for (int nb = 0; nb < KB; ++nb) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4(smem_u32(Kt + tile_offset<D, PIPELINED>(16 * nb + lane % 8 + (lane / 16) * 8,
                                                                     2 * kk + (lane / 8) % 2)),
                            b0, b1, b2, b3);
                mma_bf16(sf[2 * nb], qf[kk], b0, b1);
                mma_bf16(sf[2 * nb + 1], qf[kk], b2, b3);
            }

        // masks only where a tile crosses the end of K or the causal diagonal
        const bool edge = c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > r0 + offset);
        if (edge) {
#pragma unroll
            for (int n = 0; n < NB; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int key = c0 + 8 * n + 2 * t + (e & 1), row = row_a + (e >> 1) * 8;
                    if (key >= p.Sk || (p.causal && key > row + offset)) sf[n][e] = -INFINITY;
                }
        }

        // online softmax, per row h (0: row_a, 1: row_a + 8), in log2 units
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float mx = -INFINITY;
#pragma unroll
            for (int n = 0; n < NB; ++n) mx = fmaxf(mx, fmaxf(sf[n][2 * h], sf[n][2 * h + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float m_new = fmaxf(m[h], mx * p.scale_log2);
            const float m_use = m_new == -INFINITY ? 0.f : m_new;  // a row with nothing visible yet
            const float alpha = exp2f(m[h] - m_use);
            m[h] = m_new;
            float sum = 0.f;
#pragma unroll
            for (int n = 0; n < NB; ++n) {
                sf[n][2 * h] = exp2f(fmaf(sf[n][2 * h], p.scale_log2, -m_use));
                sf[n][2 * h + 1] = exp2f(fmaf(sf[n][2 * h + 1], p.scale_log2, -m_use));
                sum += sf[n][2 * h] + sf[n][2 * h + 1];
            }
            l[h] = l[h] * alpha + sum;
#pragma unroll
            for (int n = 0; n < DN; ++n) of[n][2 * h] *= alpha, of[n][2 * h + 1] *= alpha;
        }

        // O += P·V: P's A fragment of keys 16kb… from the C fragments of n-blocks 2kb, 2kb+1; V's B fragments of
        // head-dim blocks 2db, 2db+1 from one ldmatrix.x4.trans (keys 16kb + lane%8 (+8 for lanes 8–15, 24–31),
        // chunk 2db (+1 for lanes 16–31))
#pragma unroll
        for (int kb = 0; kb < KB; ++kb) {
            const unsigned pa[4] = {pack_bf16(sf[2 * kb][0], sf[2 * kb][1]), pack_bf16(sf[2 * kb][2], sf[2 * kb][3]),
                                    pack_bf16(sf[2 * kb + 1][0], sf[2 * kb + 1][1]),
                                    pack_bf16(sf[2 * kb + 1][2], sf[2 * kb + 1][3])};
#pragma unroll
            for (int db = 0; db < DK; ++db) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(smem_u32(Vt + tile_offset<D, PIPELINED>(16 * kb + lane % 8 + ((lane / 8) % 2) * 8,
                                                                           2 * db + lane / 16)),
                                  b0, b1, b2, b3);
                mma_bf16(of[2 * db], pa, b0, b1);
                mma_bf16(of[2 * db + 1], pa, b2, b3);
            }
        }
        __syncthreads();  // everyone is done with this stage before it is refilled
    }

    // O / l (l summed over the quad's 4 lanes); a row that saw no key gets zeros
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float sum = l[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const int row = row_a + 8 * h;
        if (row < p.Sq) {
#pragma unroll
            for (int n = 0; n < DN; ++n)
                *reinterpret_cast<unsigned*>(o + size_t(row) * D + 8 * n + 2 * t) =
                    pack_bf16(of[n][2 * h] * inv, of[n][2 * h + 1] * inv);
        }
    }
}

template <int D, int WARPS, int BC, bool PIPELINED>
void launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
            int Sq, int Sk, bool causal) {
    constexpr int BR = 16 * WARPS;
    constexpr size_t smem = size_t(BR + (PIPELINED ? 4 : 2) * BC) * D * sizeof(__nv_bfloat16);
    auto kernel = flash_bf16_kernel<D, WARPS, BC, PIPELINED>;
    static const bool attr_set = [&] {  // dynamic shared memory above 48 KB must be allowed, once per kernel
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        return true;
    }();
    (void)attr_set;
    if (B * H == 0 || Sq == 0) return;
    const Params p{q, k, v, o, Sq, Sk, causal, float(1.4426950408889634 / std::sqrt(double(D)))};
    const dim3 grid(unsigned(B * H), unsigned((Sq + BR - 1) / BR));
    kernel<<<grid, WARPS * 32, smem>>>(p);
    CUDA_CHECK_LAUNCH();
}

// The ladder's benchmark (bench_ladder_bf16.cpp) times these.
#define ATTNLAB_BF16_INSTANCES(X) \
    X(64, 4, 64, true) X(128, 4, 64, true) X(64, 8, 64, true) X(128, 8, 64, true) X(64, 4, 64, false) X(128, 4, 64, false)
#define X(D, W, BC, P)                                                                                                  \
    template void launch<D, W, BC, P>(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, \
                                      int, int, int, int, bool);
ATTNLAB_BF16_INSTANCES(X)
#undef X

}  // namespace task4::bf16_detail
