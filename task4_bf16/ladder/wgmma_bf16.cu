// wgmma_bf16.cu — rung 6 of the bf16 ladder (course staff; not in the student kit): Hopper's warpgroup MMA.
//
// What it adds to rung 4 (the mma.sync reference): S = Q·Kᵀ and O += P·V by `wgmma.mma_async`, one instruction
// per 64 × N × 16 step for a whole warpgroup (4 warps, 128 threads), its B operand (and for Q·Kᵀ its A operand too)
// read by the tensor cores straight from shared memory through a 64-bit descriptor. No ldmatrix, no B fragments in
// registers: rung 4's warps spent 58 % of the shared-memory pipe and many registers on them (docs/perf.md, ncu).
// The tiles are kept in the 128-byte-swizzled layout that the descriptors name (hopper_bf16.cuh, sw128_offset).
// Why: mma.sync on Hopper runs at about half the tensor cores' rate; wgmma is the instruction that reaches it.
//
// Layout: a block of 2 warpgroups owns 128 query rows of one (batch, head), warpgroup w rows 64w … 64w+63 (the
// wgmma M of 64); key tiles of BC = 128. Each thread holds its rows' S (BC/2 floats) and O (D/2 floats) in the
// accumulator layout of wgmma (the m16n8 C layout per warp), so the online softmax is rung 4's, per thread two rows.
// P goes to the tensor cores from registers (the C fragment of S is the A fragment of P, as with mma.sync).
// Loads are still rung 4's: every thread issues cp.async into the swizzled layout, double-buffered, and a
// __syncthreads per tile separates the stages. What stays to gain: the next rungs (TMA, warp specialisation,
// ping-pong).
//
// Build and run: make ladder-task4-bf16 (the Makefile compiles this file for sm_80 + sm_90a, -DATTNLAB_SM90A=1);
// the rung runs on compute capability 9.0 only (H100, H200), elsewhere the ladder skips it.
#include "task4_bf16/ladder/hopper_bf16.cuh"
#include "task4_bf16/ladder/ladder_bf16.h"

namespace task4::ladder_bf16 {
namespace {

using namespace task4::hopper;
constexpr int BR = 128, BC = 128, THREADS = 256;

// ROWS rows of a [len, D] matrix from row0 into a swizzled tile (zeros past len). Thread t copies chunk t mod D/8 of
// rows t / (D/8) + i·STEP; STEP is a multiple of 8, so each thread's swizzle is the same in every row it copies.
template <int D, int ROWS>
__device__ __forceinline__ void load_tile(uint32_t tile, const __nv_bfloat16* src, int row0, int len) {
    constexpr int CPR = D / 8, STEP = THREADS / CPR;
    const int r = threadIdx.x / CPR, c = threadIdx.x % CPR;
    const uint32_t d = tile + sw128_offset<ROWS>(r, 8 * c);
#pragma unroll
    for (int i = 0; i < ROWS / STEP; ++i) {
        const bool valid = row0 + r + i * STEP < len;
        cp_async16(d + i * STEP * 128, valid ? src + size_t(row0 + r + i * STEP) * D + 8 * c : src, valid);
    }
}

template <int D>
__global__ void __launch_bounds__(THREADS, 1) wgmma_kernel(const __grid_constant__ Params p) {
#if ATTNLAB_SM90A_DEVICE
    constexpr int Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023) & ~1023u;  // the swizzle wants 1024-byte-aligned tiles
    const uint32_t sK = sQ + Q_BYTES, sV = sK + 2 * KV_BYTES;     // K and V: 2 stages each

    const int rb = p.causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);  // causal: longest rows first
    const int r0 = rb * BR, bh = int(blockIdx.y);
    const __nv_bfloat16* q = p.q + size_t(bh) * p.Sq * D;
    const __nv_bfloat16* k = p.k + size_t(bh) * p.Sk * D;
    const __nv_bfloat16* v = p.v + size_t(bh) * p.Sk * D;
    __nv_bfloat16* o = p.o + size_t(bh) * p.Sq * D;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128, warp = tid / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int offset = p.Sk - p.Sq;  // causal: key j visible to query i iff j ≤ i + offset
    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? max(0, min(p.Sk, last_row + offset + 1)) : p.Sk;
    const int n_tiles = (kv_end + BC - 1) / BC;
    const int wg_row0 = r0 + 64 * wg;            // this warpgroup's first row
    const int row_a = wg_row0 + 16 * warp + g;   // this thread's rows: row_a, row_a + 8

    load_tile<D, BR>(sQ, q, r0, p.Sq);
    if (n_tiles > 0) load_tile<D, BC>(sK, k, 0, p.Sk), load_tile<D, BC>(sV, v, 0, p.Sk);
    cp_async_commit();

    float o_acc[D / 2], s[BC / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, alpha[2];
    uint32_t pf[BC / 16][4];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;

    for (int j = 0; j < n_tiles; ++j) {
        const int c0 = j * BC, stage = j & 1;
        if (j + 1 < n_tiles) {
            load_tile<D, BC>(sK + (stage ^ 1) * KV_BYTES, k, c0 + BC, p.Sk);
            load_tile<D, BC>(sV + (stage ^ 1) * KV_BYTES, v, c0 + BC, p.Sk);
            cp_async_commit();
            cp_async_wait<1>();  // tile j (and Q) have landed; tile j+1 may still be in flight
        } else {
            cp_async_wait<0>();
        }
        fence_proxy_async();  // cp.async wrote through the generic proxy; wgmma reads through the async one
        __syncthreads();

        wgmma_fence();
        gemm_qk<D, BC, BR>(s, sQ + 64 * wg * 128, sK + stage * KV_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        pin(s);

        if (c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > wg_row0 + offset))
            mask_tile<BC>(s, row_a, c0, t, p.Sk, p.causal, offset);
        online_softmax<BC>(s, m, l, alpha, p.scale_log2);
        rescale<D>(o_acc, alpha);
        to_a_fragments<BC>(s, pf);

        wgmma_fence();
        gemm_pv<D, BC>(o_acc, pf, sV + stage * KV_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        pin(o_acc);
        __syncthreads();  // both warpgroups are done with this stage before it is refilled
    }
    cp_async_wait<0>();  // (n_tiles = 0: Q's copy is still owed)
    __syncthreads();

    // O / l as bf16 over this warpgroup's own rows of the Q tile, then 16-byte coalesced stores of whole rows
    store_o_tile<D, BR>(sQ, o_acc, l, 64 * wg + 16 * warp + g, t);
    bar_sync(1 + wg, 128);
    constexpr int CPR = D / 8, STEP = 128 / CPR;
    const int c = tid % CPR;
#pragma unroll
    for (int i = 0; i < 64 / STEP; ++i) {
        const int r = 64 * wg + tid / CPR + i * STEP;
        if (r0 + r < p.Sq) {
            uint4 val;
            asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(val.x), "=r"(val.y), "=r"(val.z), "=r"(val.w)
                         : "r"(sQ + sw128_offset<BR>(r, 8 * c)));
            *reinterpret_cast<uint4*>(o + size_t(r0 + r) * D + 8 * c) = val;
        }
    }
#else
    __trap();
#endif
}

template <int D>
void launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
            int Sq, int Sk, bool causal) {
    constexpr size_t smem = size_t(BR + 4 * BC) * D * 2 + 1024;
    static const bool attr_set = [] {
        CUDA_CHECK(cudaFuncSetAttribute(wgmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        return true;
    }();
    (void)attr_set;
    if (B * H == 0 || Sq == 0) return;
    Params p{};
    p.q = q, p.k = k, p.v = v, p.o = o, p.Sq = Sq, p.Sk = Sk, p.causal = causal;
    p.scale_log2 = float(1.4426950408889634 / std::sqrt(double(D)));
    const dim3 grid(unsigned((Sq + BR - 1) / BR), unsigned(B * H));  // a head's row blocks side by side: K, V shared in L2
    wgmma_kernel<D><<<grid, THREADS, smem>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void wgmma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
                   int Sq, int Sk, int D, bool causal) {
    if (!device_is_sm90a()) throw std::runtime_error("wgmma_forward: needs an sm_90a build on a compute capability 9.0 GPU");
    (D == 64 ? launch<64> : launch<128>)(q, k, v, o, B, H, Sq, Sk, causal);
}

}  // namespace task4::ladder_bf16
