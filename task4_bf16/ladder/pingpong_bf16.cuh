// pingpong_bf16.cuh — rung 9 of the bf16 ladder (course staff; not in the student kit): FlashAttention-3's
// schedule — two consumer warpgroups in ping-pong, and the next Q·Kᵀ issued before the current softmax.
//
// What it adds to rung 8 (producer + consumers, setmaxnreg):
// 1. Ping-pong. A consumer's tile is GEMMs (tensor cores) then softmax (ex2 on the MUFU unit, FMNMX, shuffles):
//    with both consumers in step, the tensor cores idle during both softmaxes. Two named barriers (one per
//    consumer) pass a turn back and forth: a consumer waits for its turn (bar.sync on its own barrier), issues its
//    GEMMs, and hands the turn over (bar.arrive on the other's) — so one consumer's softmax runs while the other's
//    GEMMs keep the tensor cores busy. Consumer 0 gives itself the first turn.
// 2. Intra-warpgroup overlap (OVERLAP). Per key tile j, a consumer issues S_j = Q·K_jᵀ and then O += P_{j−1}·V_{j−1}
//    (two wgmma groups in flight), waits for the first group only, runs the softmax of S_j while P_{j−1}·V_{j−1} is
//    still on the tensor cores, then waits for it, rescales O and turns S_j into P_j (bf16 registers) for the next
//    step. The registers: S_j, O and P_{j−1} are live at once (64 + 64 + 32 a thread at D = BC = 128).
//    What the compiler does with it: P_{j−1}'s registers look free once its wgmma is issued, so ptxas gives them to
//    the softmax's values and, because the tensor cores read them until the wait, moves the wait for P_{j−1}·V_{j−1}
//    up to the softmax's start: no overlap at all (read it in the SASS: WARPGROUP.DEPBAR before the MUFU.EX2s).
//    hold_fragments after the softmax (stores of P that never run, in a branch) keeps them, and the wait, in place.
//    Without OVERLAP, each turn is P_{j−1}·V_{j−1} then Q·K_jᵀ, waited for together (ping-pong alone).
// Why: rung 8's consumers each wait for their own GEMMs before the softmax and for the softmax before the next
// GEMM; the tensor cores see both consumers' requests at the same moments and nothing in between.
//
// Everything else is rung 8: warpgroup 0 produces (TMA into STAGES stages, full/empty mbarriers, 24 registers),
// consumers 1 and 2 own rows 0–63 and 64–127 of the block (240 registers), key tiles of BC keys, the output by TMA.
// QREG (a variant): Q's A fragments in registers (ldmatrix once, then wgmma with A from registers), so that Q·Kᵀ reads
// only K from shared memory; rung 10 uses it.
// A header so that other files can instantiate the kernel; everything in it has internal linkage.
// Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); compute capability 9.0 only.
#pragma once
#include <type_traits>

#include "task4_bf16/ladder/hopper_bf16.cuh"

namespace task4::hopper {
namespace {

template <int D, int BC, int STAGES, bool OVERLAP, bool QREG>
__global__ void __launch_bounds__(384, 1) pingpong_kernel(const __grid_constant__ Params p) {
#if ATTNLAB_SM90A_DEVICE
    constexpr int BR = 128, Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2, CB = D / 64;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023) & ~1023u;
    const uint32_t sK = sQ + Q_BYTES, sV = sK + STAGES * KV_BYTES;
    const uint32_t bar_q = sV + STAGES * KV_BYTES, full_k = bar_q + 8, full_v = full_k + 8 * STAGES,
                   empty_k = full_v + 8 * STAGES, empty_v = empty_k + 8 * STAGES;

    const int rb = p.causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);  // causal: longest rows first
    const int r0 = rb * BR, bh = int(blockIdx.y);
    const int offset = p.Sk - p.Sq;  // causal: key j visible to query i iff j ≤ i + offset
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
        // ---- producer (rung 8's) ----
        regs_lower<24>();
        if (threadIdx.x == 0 && n_tiles > 0) {
            mbar_arrive_expect_tx(bar_q, Q_BYTES);
#pragma unroll
            for (int cb = 0; cb < CB; ++cb) tma_load_3d(sQ + cb * BR * 128, &p.tq, bar_q, 64 * cb, r0, bh);
            for (int j = 0; j < n_tiles; ++j) {
                const int st = j % STAGES;
                const uint32_t phase = (j / STAGES) & 1;
                mbar_wait(empty_k + 8 * st, phase ^ 1);
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
        return;
    }

    // ---- consumers: warpgroup c = wg − 1 owns rows 64c … 64c+63 of the block ----
    regs_raise<240>();
    const int c = wg - 1, tid = threadIdx.x % 128, warp = tid / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int wg_row0 = r0 + 64 * c, row_a = wg_row0 + 16 * warp + g;
    const int my_turn = 3 + c, other_turn = 4 - c;  // named barriers 3 and 4 (1, 2: the epilogue's)
    const uint32_t q_tile = sQ + 64 * c * 128;

    float o_acc[D / 2], s[BC / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, alpha[2];
    uint32_t pf[BC / 16][4];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;

    auto kv_stage = [&](int j) { return j % STAGES; };
    auto kv_phase = [&](int j) { return uint32_t(j / STAGES) & 1; };
    auto softmax_tile = [&](int j) {  // S_j → P_j (fp32, in s), alpha, m, l
        const int c0 = j * BC;
        if (c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > wg_row0 + offset))
            mask_tile<BC>(s, row_a, c0, t, p.Sk, p.causal, offset);
        online_softmax<BC>(s, m, l, alpha, p.scale_log2);
    };

    // QREG (a variant): Q's A fragments in registers, loaded once by ldmatrix, so that Q·Kᵀ reads only K from shared memory
    uint32_t qf[QREG ? D / 16 : 1][4];
    auto qk = [&](uint32_t k_tile) {
        if constexpr (QREG)
            gemm_qk_rs<D, BC>(s, qf, k_tile);
        else
            gemm_qk<D, BC, BR>(s, q_tile, k_tile);
    };
    if (n_tiles > 0) {
        if (c == 0) bar_arrive(my_turn, 256);  // consumer 0 takes the first turn
        mbar_wait(bar_q, 0);
        if constexpr (QREG) load_q_fragments<D, BR>(qf, sQ, 64 * c);
        if constexpr (OVERLAP) {
            // S_0 alone (both consumers at once), its softmax; then each step: S_j and P_{j−1}·V_{j−1} in flight
            mbar_wait(full_k, 0);
            wgmma_fence();
            qk(sK);
            wgmma_commit();
            wgmma_wait<0>();
            pin(s);
            if (lane == 0) mbar_arrive(empty_k);
            softmax_tile(0);
            to_a_fragments<BC>(s, pf);
            for (int j = 1; j < n_tiles; ++j) {
                const int st = kv_stage(j), sp = kv_stage(j - 1);
                mbar_wait(full_k + 8 * st, kv_phase(j));
                mbar_wait(full_v + 8 * sp, kv_phase(j - 1));  // (here, not between the two groups: no branch there)
                bar_sync(my_turn, 256);
                wgmma_fence();
                qk(sK + st * KV_BYTES);
                wgmma_commit();
                gemm_pv<D, BC>(o_acc, pf, sV + sp * KV_BYTES);
                wgmma_commit();
                bar_arrive(other_turn, 256);
                wgmma_wait<1>();  // S_j is done; P_{j−1}·V_{j−1} may still run
                pin(s);
                if (lane == 0) mbar_arrive(empty_k + 8 * st);
                softmax_tile(j);
                hold_fragments(pf, p.Sk < 0);  // or ptxas moves the next wait up to the softmax's start (see above)
                wgmma_wait<0>();
                pin(o_acc);
                if (lane == 0) mbar_arrive(empty_v + 8 * sp);
                rescale<D>(o_acc, alpha);
                to_a_fragments<BC>(s, pf);
            }
            const int sl = kv_stage(n_tiles - 1);
            mbar_wait(full_v + 8 * sl, kv_phase(n_tiles - 1));
            wgmma_fence();
            gemm_pv<D, BC>(o_acc, pf, sV + sl * KV_BYTES);
            wgmma_commit();
            wgmma_wait<0>();
            pin(o_acc);
            if (lane == 0) mbar_arrive(empty_v + 8 * sl);
        } else {
            // each turn: P_{j−1}·V_{j−1} then Q·K_jᵀ, waited for together (the first turn has no P·V, one more turn
            // has the last P·V alone); straight-line code in each, since wgmma under a run-time condition is serialised
            auto turn = [&](auto pv, auto with_qk, int j) {
                const int st = kv_stage(j), sp = kv_stage(j + STAGES - 1);
                if constexpr (decltype(with_qk)::value) mbar_wait(full_k + 8 * st, kv_phase(j));
                if constexpr (decltype(pv)::value) mbar_wait(full_v + 8 * sp, kv_phase(j - 1));
                bar_sync(my_turn, 256);
                wgmma_fence();
                if constexpr (decltype(pv)::value) gemm_pv<D, BC>(o_acc, pf, sV + sp * KV_BYTES);
                if constexpr (decltype(with_qk)::value) qk(sK + st * KV_BYTES);
                wgmma_commit();
                bar_arrive(other_turn, 256);
                wgmma_wait<0>();
                pin(s);
                pin(o_acc);
                if (lane == 0) {
                    if constexpr (decltype(pv)::value) mbar_arrive(empty_v + 8 * sp);
                    if constexpr (decltype(with_qk)::value) mbar_arrive(empty_k + 8 * st);
                }
                if constexpr (decltype(with_qk)::value) {
                    softmax_tile(j);
                    rescale<D>(o_acc, alpha);
                    to_a_fragments<BC>(s, pf);
                }
            };
            using yes = std::true_type;
            using no = std::false_type;
            turn(no{}, yes{}, 0);
            for (int j = 1; j < n_tiles; ++j) turn(yes{}, yes{}, j);
            turn(yes{}, no{}, n_tiles);
        }
    }

    // O / l as bf16 into this consumer's rows of the Q tile (its last Q·Kᵀ is done), then TMA stores them
    store_o_tile<D, BR>(sQ, o_acc, l, 64 * c + 16 * warp + g, t);
    fence_proxy_async();
    bar_sync(1 + c, 128);
    if (tid == 0 && wg_row0 < p.Sq) {
#pragma unroll
        for (int cb = 0; cb < CB; ++cb) tma_store_3d(&p.to, sQ + cb * BR * 128 + 64 * c * 128, 64 * cb, wg_row0, bh);
        tma_store_commit_and_wait();
    }
#else
    __trap();
#endif
}

// Launches the kernel (the caller checked device_is_sm90a() and 16-byte alignment).
template <int D, int BC, int STAGES, bool OVERLAP, bool QREG = false>
void pingpong_launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                     int H, int Sq, int Sk, bool causal) {
    constexpr int BR = 128;
    constexpr size_t smem = size_t(BR + 2 * STAGES * BC) * D * 2 + 1024 + 256;
    static_assert(smem <= 227 * 1024, "shared memory: fewer stages or a smaller key tile");
    static const bool attr_set = [] {
        CUDA_CHECK(cudaFuncSetAttribute(pingpong_kernel<D, BC, STAGES, OVERLAP, QREG>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(smem)));
        return true;
    }();
    (void)attr_set;
    if (B * H == 0 || Sq == 0) return;
    const Params p = make_params(q, k, v, o, B * H, Sq, Sk, D, causal, BR, BC);
    const dim3 grid(unsigned((Sq + BR - 1) / BR), unsigned(B * H));
    pingpong_kernel<D, BC, STAGES, OVERLAP, QREG><<<grid, 384, smem>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace task4::hopper
