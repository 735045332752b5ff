// tma_bf16.cu — rung 7 of the bf16 ladder (course staff; not in the student kit): TMA loads and stores with an
// mbarrier pipeline.
//
// What it adds to rung 6 (wgmma): the tiles move by the Tensor Memory Accelerator. One thread issues
// `cp.async.bulk.tensor` for a whole box ([rows][64 columns] of a 3-D view [B·H][S][D] of the tensor, described once
// on the host by a CUtensorMap, cuTensorMapEncodeTiled); the copy engine writes it into shared memory already
// 128-byte-swizzled for wgmma, fills rows past the sequence's end with zeros (so the ragged tail needs no
// predicates), and signals an mbarrier when its bytes have landed. Threads wait on the barrier's phase (parity)
// instead of a cp.async group: K and V of a stage have a barrier each, so S = Q·Kᵀ starts before V is there.
// STAGES tiles are in flight. The output leaves the same way: each warpgroup writes its O rows into its part of
// the Q tile (swizzled), fences, and one thread stores the box (rows past Sq are clipped by the copy engine).
// Why: rung 6's 256 threads each computed addresses, predicates and swizzles for 8 cp.async a tile, and every
// thread's registers held them; now one thread issues 2·D/64 instructions a tile and the others only compute.
// What it does not do yet: the stage is refilled only after a __syncthreads, by a thread that also computes —
// the next rung gives the loads their own warp.
//
// Layout as rung 6: a block of 2 warpgroups owns 128 query rows of one (batch, head); key tiles of BC = 128.
// Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); compute capability 9.0 only.
#include "task4_bf16/ladder/hopper_bf16.cuh"
#include "task4_bf16/ladder/ladder_bf16.h"

namespace task4::ladder_bf16 {
namespace {

using namespace task4::hopper;
constexpr int BR = 128, BC = 128, THREADS = 256;

template <int D, int STAGES>
__global__ void __launch_bounds__(THREADS, 1) tma_kernel(const __grid_constant__ Params p) {
#if ATTNLAB_SM90A_DEVICE
    constexpr int Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2, CB = D / 64;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023) & ~1023u;
    const uint32_t sK = sQ + Q_BYTES, sV = sK + STAGES * KV_BYTES;
    const uint32_t bar_q = sV + STAGES * KV_BYTES, bar_k = bar_q + 8, bar_v = bar_k + 8 * STAGES;  // 8 bytes each

    const int rb = p.causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
    const int r0 = rb * BR, bh = int(blockIdx.y);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128, warp = tid / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int offset = p.Sk - p.Sq;
    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? max(0, min(p.Sk, last_row + offset + 1)) : p.Sk;
    const int n_tiles = (kv_end + BC - 1) / BC;
    const int wg_row0 = r0 + 64 * wg, row_a = wg_row0 + 16 * warp + g;

    // tile j's K and V into stage j % STAGES, each completing its own barrier
    auto load_kv = [&](int j) {
        const int st = j % STAGES;
        mbar_arrive_expect_tx(bar_k + 8 * st, KV_BYTES);
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) tma_load_3d(sK + st * KV_BYTES + cb * BC * 128, &p.tk, bar_k + 8 * st, 64 * cb, j * BC, bh);
        mbar_arrive_expect_tx(bar_v + 8 * st, KV_BYTES);
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) tma_load_3d(sV + st * KV_BYTES + cb * BC * 128, &p.tv, bar_v + 8 * st, 64 * cb, j * BC, bh);
    };
    if (threadIdx.x == 0) {
        mbar_init(bar_q, 1);
        for (int st = 0; st < STAGES; ++st) mbar_init(bar_k + 8 * st, 1), mbar_init(bar_v + 8 * st, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0 && n_tiles > 0) {
        mbar_arrive_expect_tx(bar_q, Q_BYTES);
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) tma_load_3d(sQ + cb * BR * 128, &p.tq, bar_q, 64 * cb, r0, bh);
        for (int j = 0; j < min(STAGES, n_tiles); ++j) load_kv(j);
    }

    float o_acc[D / 2], s[BC / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, alpha[2];
    uint32_t pf[BC / 16][4];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
    if (n_tiles > 0) mbar_wait(bar_q, 0);

    for (int j = 0; j < n_tiles; ++j) {
        const int c0 = j * BC, st = j % STAGES;
        const uint32_t phase = (j / STAGES) & 1;
        mbar_wait(bar_k + 8 * st, phase);
        wgmma_fence();
        gemm_qk<D, BC, BR>(s, sQ + 64 * wg * 128, sK + st * KV_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        pin(s);

        if (c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > wg_row0 + offset))
            mask_tile<BC>(s, row_a, c0, t, p.Sk, p.causal, offset);
        online_softmax<BC>(s, m, l, alpha, p.scale_log2);
        rescale<D>(o_acc, alpha);
        to_a_fragments<BC>(s, pf);

        mbar_wait(bar_v + 8 * st, phase);
        wgmma_fence();
        gemm_pv<D, BC>(o_acc, pf, sV + st * KV_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        pin(o_acc);
        __syncthreads();  // both warpgroups are done with stage st: refill it with tile j + STAGES
        if (threadIdx.x == 0 && j + STAGES < n_tiles) load_kv(j + STAGES);
    }

    // O / l as bf16 into this warpgroup's rows of the Q tile; then one thread stores them with TMA
    store_o_tile<D, BR>(sQ, o_acc, l, 64 * wg + 16 * warp + g, t);
    fence_proxy_async();  // st.shared (generic proxy) before the copy engine (async proxy) reads them
    bar_sync(1 + wg, 128);
    if (tid == 0 && wg_row0 < p.Sq) {
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) tma_store_3d(&p.to, sQ + cb * BR * 128 + 64 * wg * 128, 64 * cb, wg_row0, bh);
        tma_store_commit_and_wait();  // shared memory must outlive the copy's reads
    }
#else
    __trap();
#endif
}

template <int D, int STAGES>
void launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
            int Sq, int Sk, bool causal) {
    constexpr size_t smem = size_t(BR + 2 * STAGES * BC) * D * 2 + 1024 + 256;
    static const bool attr_set = [] {
        CUDA_CHECK(cudaFuncSetAttribute(tma_kernel<D, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        return true;
    }();
    (void)attr_set;
    if (B * H == 0 || Sq == 0) return;
    const Params p = make_params(q, k, v, o, B * H, Sq, Sk, D, causal, BR, BC);
    const dim3 grid(unsigned((Sq + BR - 1) / BR), unsigned(B * H));
    tma_kernel<D, STAGES><<<grid, THREADS, smem>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void tma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
                 int Sq, int Sk, int D, bool causal) {
    if (!device_is_sm90a()) throw std::runtime_error("tma_forward: needs an sm_90a build on a compute capability 9.0 GPU");
    if (!tma_aligned(q, k, v, o)) throw std::invalid_argument("tma_forward: q, k, v and o must be 16-byte aligned");
    (D == 64 ? launch<64, 3> : launch<128, 2>)(q, k, v, o, B, H, Sq, Sk, causal);
}

}  // namespace task4::ladder_bf16
