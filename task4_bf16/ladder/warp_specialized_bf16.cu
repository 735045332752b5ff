// warp_specialized_bf16.cu — rung 8 of the bf16 ladder (course staff; not in the student kit): a producer warpgroup
// and consumer warpgroups, with their own register budgets (warp specialisation).
//
// What it adds to rung 7 (TMA + mbarriers): the loads get a warpgroup of their own. Warpgroup 0 is the producer:
// one of its threads walks the key tiles and issues the TMA copies, each into a stage that the consumers have
// released (an "empty" mbarrier per stage and operand, on which every consumer warp arrives once its wgmma have
// read it); the consumers wait on the "full" barriers only. No __syncthreads in the loop: each warpgroup runs at
// its own pace, and the copy of tile j + STAGES starts the moment tile j's stage is free. The producer needs few
// registers, the consumers many (S, O and P are 64 + 64 + 32 registers a thread at D = 128): `setmaxnreg` moves
// them — the kernel starts with 168 a thread (3 warpgroups, one block per SM, 65536 registers), the producer gives
// back down to 24 and the consumers take 240 (24·128 + 240·256 = 64512).
// Why: in rung 7 the thread that issued the copies also computed, and the refill waited for the slowest warp.
// What it does not do yet: within a consumer, the softmax still waits for Q·Kᵀ and P·V for the softmax, and the two
// consumers contend for the tensor cores at the same moments — the next rung staggers them (ping-pong) and overlaps
// the next Q·Kᵀ with the current softmax.
//
// Layout: 3 warpgroups (384 threads); consumers 1 and 2 own query rows 0–63 and 64–127 of the block's 128; key
// tiles of BC = 128; STAGES stages of K and of V.
// Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); compute capability 9.0 only.
#include "task4_bf16/ladder/hopper_bf16.cuh"
#include "task4_bf16/ladder/ladder_bf16.h"

namespace task4::ladder_bf16 {
namespace {

using namespace task4::hopper;
constexpr int BR = 128, BC = 128, THREADS = 384;

template <int D, int STAGES>
__global__ void __launch_bounds__(THREADS, 1) warp_specialized_kernel(const __grid_constant__ Params p) {
#if ATTNLAB_SM90A_DEVICE
    constexpr int Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2, CB = D / 64;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023) & ~1023u;
    const uint32_t sK = sQ + Q_BYTES, sV = sK + STAGES * KV_BYTES;
    // barriers (8 bytes each): Q full; K full, V full, K empty, V empty per stage
    const uint32_t bar_q = sV + STAGES * KV_BYTES, full_k = bar_q + 8, full_v = full_k + 8 * STAGES,
                   empty_k = full_v + 8 * STAGES, empty_v = empty_k + 8 * STAGES;

    const int rb = p.causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
    const int r0 = rb * BR, bh = int(blockIdx.y);
    const int offset = p.Sk - p.Sq;
    const int last_row = min(r0 + BR, p.Sq) - 1;
    const int kv_end = p.causal ? max(0, min(p.Sk, last_row + offset + 1)) : p.Sk;
    const int n_tiles = (kv_end + BC - 1) / BC;

    if (threadIdx.x == 0) {
        mbar_init(bar_q, 1);
        for (int st = 0; st < STAGES; ++st) {
            mbar_init(full_k + 8 * st, 1), mbar_init(full_v + 8 * st, 1);
            mbar_init(empty_k + 8 * st, 8), mbar_init(empty_v + 8 * st, 8);  // the 8 consumer warps
        }
        fence_barrier_init();
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        // ---- producer ----
        regs_lower<24>();
        if (threadIdx.x == 0 && n_tiles > 0) {
            mbar_arrive_expect_tx(bar_q, Q_BYTES);
#pragma unroll
            for (int cb = 0; cb < CB; ++cb) tma_load_3d(sQ + cb * BR * 128, &p.tq, bar_q, 64 * cb, r0, bh);
            for (int j = 0; j < n_tiles; ++j) {
                const int st = j % STAGES;
                const uint32_t phase = (j / STAGES) & 1;
                mbar_wait(empty_k + 8 * st, phase ^ 1);  // the consumers released tile j − STAGES's K
                mbar_arrive_expect_tx(full_k + 8 * st, KV_BYTES);
#pragma unroll
                for (int cb = 0; cb < CB; ++cb)
                    tma_load_3d(sK + st * KV_BYTES + cb * BC * 128, &p.tk, full_k + 8 * st, 64 * cb, j * BC, bh);
                mbar_wait(empty_v + 8 * st, phase ^ 1);
                mbar_arrive_expect_tx(full_v + 8 * st, KV_BYTES);
#pragma unroll
                for (int cb = 0; cb < CB; ++cb)
                    tma_load_3d(sV + st * KV_BYTES + cb * BC * 128, &p.tv, full_v + 8 * st, 64 * cb, j * BC, bh);
            }
        }
    } else {
        // ---- consumers: warpgroup c = wg − 1 owns rows 64c … 64c+63 of the block ----
        regs_raise<240>();
        const int c = wg - 1, tid = threadIdx.x % 128, warp = tid / 32, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        const int wg_row0 = r0 + 64 * c, row_a = wg_row0 + 16 * warp + g;

        float o_acc[D / 2], s[BC / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, alpha[2];
        uint32_t pf[BC / 16][4];
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
        if (n_tiles > 0) mbar_wait(bar_q, 0);

        for (int j = 0; j < n_tiles; ++j) {
            const int c0 = j * BC, st = j % STAGES;
            const uint32_t phase = (j / STAGES) & 1;
            mbar_wait(full_k + 8 * st, phase);
            wgmma_fence();
            gemm_qk<D, BC, BR>(s, sQ + 64 * c * 128, sK + st * KV_BYTES);
            wgmma_commit();
            wgmma_wait<0>();
            pin(s);
            if (lane == 0) mbar_arrive(empty_k + 8 * st);

            if (c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > wg_row0 + offset))
                mask_tile<BC>(s, row_a, c0, t, p.Sk, p.causal, offset);
            online_softmax<BC>(s, m, l, alpha, p.scale_log2);
            rescale<D>(o_acc, alpha);
            to_a_fragments<BC>(s, pf);

            mbar_wait(full_v + 8 * st, phase);
            wgmma_fence();
            gemm_pv<D, BC>(o_acc, pf, sV + st * KV_BYTES);
            wgmma_commit();
            wgmma_wait<0>();
            pin(o_acc);
            if (lane == 0) mbar_arrive(empty_v + 8 * st);
        }

        store_o_tile<D, BR>(sQ, o_acc, l, 64 * c + 16 * warp + g, t);
        fence_proxy_async();
        bar_sync(1 + c, 128);
        if (tid == 0 && wg_row0 < p.Sq) {
#pragma unroll
            for (int cb = 0; cb < CB; ++cb) tma_store_3d(&p.to, sQ + cb * BR * 128 + 64 * c * 128, 64 * cb, wg_row0, bh);
            tma_store_commit_and_wait();
        }
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
        CUDA_CHECK(cudaFuncSetAttribute(warp_specialized_kernel<D, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(smem)));
        return true;
    }();
    (void)attr_set;
    if (B * H == 0 || Sq == 0) return;
    const Params p = make_params(q, k, v, o, B * H, Sq, Sk, D, causal, BR, BC);
    const dim3 grid(unsigned((Sq + BR - 1) / BR), unsigned(B * H));
    warp_specialized_kernel<D, STAGES><<<grid, THREADS, smem>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void warp_specialized_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                              int B, int H, int Sq, int Sk, int D, bool causal) {
    if (!device_is_sm90a())
        throw std::runtime_error("warp_specialized_forward: needs an sm_90a build on a compute capability 9.0 GPU");
    if (!tma_aligned(q, k, v, o)) throw std::invalid_argument("warp_specialized_forward: q, k, v and o must be 16-byte aligned");
    (D == 64 ? launch<64, 3> : launch<128, 2>)(q, k, v, o, B, H, Sq, Sk, causal);
}

}  // namespace task4::ladder_bf16
