// persistent_bf16.cuh — rung 10 of the bf16 ladder (course staff; not in the student kit): rung 9 as a persistent
// kernel fed by a dynamic tile scheduler; with QREG, Q's A fragments in registers. With QREG it is the 4b reference's
// sm_90 path (task4_bf16/reference/flash_attention_bf16_sm90.cu).
//
// What it adds to rung 9 (ping-pong, next Q·Kᵀ before the softmax):
// 1. Persistent blocks. The grid is one block per SM; each block works through (row block, head) tiles. Why: rung 9's
//    blocks each start from nothing — barriers initialised, Q loaded, the pipeline filled, S_0 and its softmax
//    alone — and end with the last P·V and the output store with nothing beside them. Here the producer loads the
//    next tile's Q and first K/V tiles while the consumers finish the current one (a "Q empty" barrier says when Q
//    may be overwritten), and the output leaves through a buffer of its own, so a consumer's store overlaps the next
//    tile. The stage counters and the consumers' turns (rung 9's named barriers) run on from tile to tile.
// 2. A dynamic tile scheduler. A block's first tile is blockIdx.x; each next one comes from an atomic counter in
//    global memory (the last block to finish resets it for the next launch), and the producer hands it to the
//    consumers in shared memory, published by the same mbarrier arrival as its Q. Tiles are numbered so that what
//    runs at once shares K and V in L2: without a mask a head's row blocks one after another; causal, the longest
//    rows first within groups of heads whose K and V fit in 16 MB together, so the short tiles come last and fill
//    the gaps. (A static split of the same list — tile u to block u mod #SMs — left the causal case 20 % slower than
//    rung 9, H100 run 3: the blocks' sums of tile lengths differed too much.)
// 3. QREG: each consumer loads its 64 rows of Q once per tile into wgmma A fragments (ldmatrix from the swizzled
//    tile) and computes Q·Kᵀ with A from registers; Q's buffer is released at once, so the next tile's Q can load
//    during the whole of this tile. (Rung 9 with Q in registers was no faster: there the buffer is not reused.)
// 4. NWG = 3 (rung 10c, D = 64 only): three consumer warpgroups on 192-row tiles, taking turns at the tensor cores in
//    a ring (FlashAttention-3's shape at head_dim 64). Why: at D = 64 a tile's two GEMMs take half the time they take
//    at 128 but its exponentials as long (MUFU, 16 a cycle per SM), so one consumer's softmax no longer hides under
//    the other's GEMMs; with three, each softmax has two other consumers' GEMMs to hide under. The registers: 32 for
//    the producer, 160 for the consumers (65,536 / 512 threads), too few for Q's fragments as well (ptxas spills and
//    serialises the wgmma), so Q·Kᵀ reads Q from shared memory. What it costs: 192 rows divide few lengths (1,024 is
//    5⅓ tiles; point 6 keeps the consumers of the rows past Sq from computing), a tile is a larger share of a wave, and
//    causal row blocks compute more masked keys; three_warpgroups_pay() below says where it wins.
// 5. At D = 128, O's rescale by the last softmax's factors runs after the next Q·Kᵀ is issued and before P·V
//    (FlashAttention-3's order), while the tensor cores work on Q·Kᵀ, instead of between P·V's wait and P's
//    conversion, the stretch of the loop that must hide under the other consumer's GEMMs: +0.4–1.9 % at the six
//    D = 128 points of issue 31's table (two H100 calls, docs/perf.md, "4b: O's rescale under the next Q·Kᵀ"). At
//    D = 64 it lost 1.7 % at S = 1,024 (two consumers) and was level with three consumers, so it stays where it was.
// 6. A consumer whose 64 rows all lie past Sq (the last row block of a length that BR does not divide: 4,096 = 21 × 192
//    + 64 leaves two of three consumers idle) waits, takes its turns and releases each stage as the others do, and
//    issues nothing: the tile's other consumers then share the tensor cores with fewer. Three consumers gained 0.5–9 %
//    where a consumer idles (6.5 % and 8.6 % causal at 16·32·1024·64; docs/perf.md, "Rung 10c: idle consumers skip
//    their work").
// 7. At D = 128, P·V's wait stays after the softmax, so that a consumer's softmax of S_j runs while the tensor cores
//    finish its own P_{j−1}·V_{j−1}. Left to itself, ptxas moved that wait up to the start of the softmax: P's fragment
//    registers are free for new values once P·V is issued, as the compiler sees it, and the tensor cores read them
//    until the wait, so ptxas waited before the first such write. hold_fragments — stores of P's fragments that never
//    run, in a branch — keeps them live and is a block boundary the wait does not cross. +0.5–1.3 % at S = 4,096 and
//    16,384, −0.1 / −0.6 % at S = 1,024; at D = 64 2.6–9.4 % slower (rung 10c's consumers, with 160 registers, then
//    hold P beside S and O through the softmax; 10b's 2.6 % at S = 1,024 causal is not explained), so at D = 128 only
//    (H200, docs/perf.md "P·V's wait after the softmax").
//
// Shared memory: Q [BR][D], STAGES × (K, V) [BC][D], O [BR][D], barriers, BR = 64·NWG. One block per SM (128·(NWG + 1)
// threads; setmaxnreg to 24 / 240 as in rung 8 with two consumers, 32 / 160 with three).
// Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); compute capability 9.0 only. A header
// so that the reference's sm_90 file can include it; everything in it has internal linkage.
#pragma once
#include <algorithm>

#include "common/cuda/device.h"
#include "task4_bf16/ladder/hopper_bf16.cuh"

namespace task4::hopper {
namespace {

struct PersistentParams {
    int BH, row_blocks, heads_per_group;
};

// Tile u → (row block, batch·head).
__device__ __forceinline__ void persistent_tile(int u, const PersistentParams& pp, bool causal, int& rb, int& bh) {
    if (!causal) {
        rb = u % pp.row_blocks, bh = u / pp.row_blocks;
    } else {
        const int per_group = pp.heads_per_group * pp.row_blocks, group = u / per_group, w = u % per_group;
        const int heads = min(pp.heads_per_group, pp.BH - group * pp.heads_per_group);
        rb = pp.row_blocks - 1 - w / heads, bh = group * pp.heads_per_group + w % heads;
    }
}

// The tile scheduler's two counters: the next tile to hand out (after each block's first, blockIdx.x), and the blocks
// that have finished taking tiles; the last of those resets both, so every launch starts from zero without a memset.
__device__ unsigned int persistent_counters[2] = {0, 0};

template <int D, int BC, int STAGES, bool QREG, int NWG>
__global__ void __launch_bounds__(128 * (NWG + 1), 1) persistent_kernel(const __grid_constant__ Params p, const PersistentParams pp) {
#if ATTNLAB_SM90A_DEVICE
    constexpr int BR = 64 * NWG, Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2, CB = D / 64;
    // Where O's rescale runs (point 5 above): after the next Q·Kᵀ is issued at D = 128, after P·V's wait at D = 64.
    constexpr bool RESCALE_UNDER_QK = D == 128;
    // Whether P·V's wait is held after the softmax (point 7 above): at D = 128.
    constexpr bool PV_WAIT_AFTER_SOFTMAX = D == 128;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023) & ~1023u;
    const uint32_t sK = sQ + Q_BYTES, sV = sK + STAGES * KV_BYTES, sO = sV + STAGES * KV_BYTES;
    const uint32_t q_full = sO + Q_BYTES, q_empty = q_full + 8, full_k = q_empty + 8, full_v = full_k + 8 * STAGES,
                   empty_k = full_v + 8 * STAGES, empty_v = empty_k + 8 * STAGES, tile_slot = empty_v + 8 * STAGES;
    const int n_units = pp.row_blocks * pp.BH;
    const int offset = p.Sk - p.Sq;
    auto kv_tiles = [&](int rb) {  // key tiles row block rb needs
        const int last_row = min((rb + 1) * BR, p.Sq) - 1;
        const int kv_end = p.causal ? max(0, min(p.Sk, last_row + offset + 1)) : p.Sk;
        return (kv_end + BC - 1) / BC;
    };

    if (threadIdx.x == 0) {
        mbar_init(q_full, 1), mbar_init(q_empty, 4 * NWG);  // empty: one arrival per consumer warp
        for (int st = 0; st < STAGES; ++st) {
            mbar_init(full_k + 8 * st, 1), mbar_init(full_v + 8 * st, 1);
            mbar_init(empty_k + 8 * st, 4 * NWG), mbar_init(empty_v + 8 * st, 4 * NWG);
        }
        fence_barrier_init();
    }
    __syncthreads();

    // The warpgroup and warp indices are broadcast from lane 0, so that the compiler knows them warp-uniform and keeps the
    // addresses and wgmma descriptors derived from them in uniform registers; from threadIdx.x it moved each descriptor
    // from ordinary registers (R2UR) before every wgmma (96 R2UR in the D = 128 kernel, 40 after). +8 % at D = 64 on
    // three consumers (docs/perf.md, "The bf16 backward (4d): the masks out of the loop"); at D = 128 it measured 1 %
    // slower on an H100 on that day's build and +1.6–2.4 % at six points on an H200 on the build after O's rescale moved
    // (docs/perf.md, "The forward beside FA4 under ncu").
    const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
    if (wg == 0) {
        // ---- producer: takes tiles from the scheduler; for each, hands the tile to the consumers with its Q (through
        // the Q barrier: the tile's index in tile_slot[q_count % 2], written before the arrive), then its K and V.
        // Past the last tile it hands over n_units, which tells the consumers to stop.
        regs_lower<NWG == 2 ? 24 : 32>();
        if (threadIdx.x == 0) {
            int loads = 0, q_count = 0;  // K/V tiles loaded so far, tiles handed over so far (the barriers' phases)
            for (int u = blockIdx.x;; ++q_count) {
                mbar_wait(q_empty, (q_count & 1) ^ 1);  // the consumers are done with the last tile's Q
                asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(tile_slot + 4 * (q_count & 1)), "r"(min(u, n_units)) : "memory");
                if (u >= n_units) {
                    mbar_arrive(q_full);
                    break;
                }
                int rb, bh;
                persistent_tile(u, pp, p.causal, rb, bh);
                const int n_tiles = kv_tiles(rb);
                if (n_tiles == 0) {
                    mbar_arrive(q_full);  // nothing to load: the consumers write zeros
                } else {
                    mbar_arrive_expect_tx(q_full, Q_BYTES);
#pragma unroll
                    for (int cb = 0; cb < CB; ++cb) tma_load_3d(sQ + cb * BR * 128, &p.tq, q_full, 64 * cb, rb * BR, bh);
                }
                for (int j = 0; j < n_tiles; ++j, ++loads) {
                    const int st = loads % STAGES;
                    const uint32_t phase = (loads / STAGES) & 1;
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
                u = int(atomicAdd(&persistent_counters[0], 1u)) + int(gridDim.x);  // the next tile, whichever block asks first
            }
            __threadfence();
            if (atomicAdd(&persistent_counters[1], 1u) == gridDim.x - 1)  // the last block to finish taking tiles
                atomicExch(&persistent_counters[0], 0u), atomicExch(&persistent_counters[1], 0u);
        }
    } else {
        // ---- consumers: rung 9's loop, tile after tile ----
        regs_raise<NWG == 2 ? 240 : 160>();
        const int c = wg - 1, tid = threadIdx.x % 128, warp = __shfl_sync(0xffffffffu, tid / 32, 0),
                  lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        // the consumers' turns at the tensor cores, in a ring (named barriers NWG+1 …; 1 … NWG are the stores')
        const int my_turn = NWG + 1 + c, other_turn = NWG + 1 + (c + 1) % NWG;
        const uint32_t q_tile = sQ + 64 * c * 128;
        if (c == 0) bar_arrive(my_turn, 256);  // consumer 0 takes the first turn; the turns then run on across tiles
        int loads = 0;
        for (int q_count = 0;; ++q_count) {
            mbar_wait(q_full, q_count & 1);
            int u;
            asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(u) : "r"(tile_slot + 4 * (q_count & 1)) : "memory");
            if (u >= n_units) break;
            int rb, bh;
            persistent_tile(u, pp, p.causal, rb, bh);
            const int n_tiles = kv_tiles(rb);
            const int wg_row0 = rb * BR + 64 * c, row_a = wg_row0 + 16 * warp + g;

            float o_acc[D / 2], s[BC / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, alpha[2];
            uint32_t pf[BC / 16][4];
#pragma unroll
            for (int i = 0; i < D / 2; ++i) o_acc[i] = 0.f;
            auto softmax_tile = [&](int j) {
                const int c0 = j * BC;
                if (c0 + BC > p.Sk || (p.causal && c0 + BC - 1 > wg_row0 + offset))
                    mask_tile<BC>(s, row_a, c0, t, p.Sk, p.causal, offset);
                online_softmax<BC>(s, m, l, alpha, p.scale_log2);
            };
            // QREG (a variant): Q's A fragments in registers (rung 9's), so Q's buffer is free for the next tile at once
            uint32_t qf[QREG ? D / 16 : 1][4];
            auto qk = [&](uint32_t k_tile) {
                if constexpr (QREG)
                    gemm_qk_rs<D, BC>(s, qf, k_tile);
                else
                    gemm_qk<D, BC, BR>(s, q_tile, k_tile);
            };
            if (n_tiles == 0) {
                if (lane == 0) mbar_arrive(q_empty);
            } else if (wg_row0 >= p.Sq) {
                // every row of this consumer lies past Sq (point 6): its place in the pipeline and the ring, no work
                int st = loads % STAGES;
                mbar_wait(full_k + 8 * st, (loads / STAGES) & 1);
                if (lane == 0) {
                    mbar_arrive(empty_k + 8 * st);
                    if (n_tiles == 1) mbar_arrive(q_empty);
                }
                for (int j = 1; j < n_tiles; ++j) {
                    const int sp = st, lp = loads + j - 1;
                    st = (loads + j) % STAGES;
                    mbar_wait(full_k + 8 * st, ((loads + j) / STAGES) & 1);
                    mbar_wait(full_v + 8 * sp, (lp / STAGES) & 1);
                    bar_sync(my_turn, 256);
                    bar_arrive(other_turn, 256);
                    if (lane == 0) {
                        mbar_arrive(empty_k + 8 * st);
                        if (j == n_tiles - 1) mbar_arrive(q_empty);
                        mbar_arrive(empty_v + 8 * sp);
                    }
                }
                const int ll = loads + n_tiles - 1;
                mbar_wait(full_v + 8 * st, (ll / STAGES) & 1);
                if (lane == 0) mbar_arrive(empty_v + 8 * st);
                loads += n_tiles;
            } else {
                if constexpr (QREG) {
                    load_q_fragments<D, BR>(qf, sQ, 64 * c);
                    if (lane == 0) mbar_arrive(q_empty);
                }
                int st = loads % STAGES;
                mbar_wait(full_k + 8 * st, (loads / STAGES) & 1);
                wgmma_fence();
                qk(sK + st * KV_BYTES);
                wgmma_commit();
                wgmma_wait<0>();
                pin(s);
                if (lane == 0) {
                    mbar_arrive(empty_k + 8 * st);
                    if (!QREG && n_tiles == 1) mbar_arrive(q_empty);  // this tile's last read of Q
                }
                softmax_tile(0);
                to_a_fragments<BC>(s, pf);
                for (int j = 1; j < n_tiles; ++j) {
                    const int sp = st, lp = loads + j - 1;
                    st = (loads + j) % STAGES;
                    mbar_wait(full_k + 8 * st, ((loads + j) / STAGES) & 1);
                    mbar_wait(full_v + 8 * sp, (lp / STAGES) & 1);
                    bar_sync(my_turn, 256);
                    wgmma_fence();
                    qk(sK + st * KV_BYTES);
                    wgmma_commit();
                    if constexpr (RESCALE_UNDER_QK) {
                        rescale<D>(o_acc, alpha);  // the last softmax's rescale, while this Q·Kᵀ runs
                        wgmma_fence();             // o_acc was written: order it before P·V reads it
                    }
                    gemm_pv<D, BC>(o_acc, pf, sV + sp * KV_BYTES);
                    wgmma_commit();
                    bar_arrive(other_turn, 256);
                    wgmma_wait<1>();
                    pin(s);
                    if (lane == 0) {
                        mbar_arrive(empty_k + 8 * st);
                        if (!QREG && j == n_tiles - 1) mbar_arrive(q_empty);
                    }
                    softmax_tile(j);
                    if constexpr (PV_WAIT_AFTER_SOFTMAX) hold_fragments(pf, p.Sk < 0);
                    wgmma_wait<0>();
                    pin(o_acc);
                    if (lane == 0) mbar_arrive(empty_v + 8 * sp);
                    if constexpr (!RESCALE_UNDER_QK) rescale<D>(o_acc, alpha);
                    to_a_fragments<BC>(s, pf);
                }
                const int ll = loads + n_tiles - 1;
                mbar_wait(full_v + 8 * st, (ll / STAGES) & 1);
                if constexpr (RESCALE_UNDER_QK) rescale<D>(o_acc, alpha);
                wgmma_fence();
                gemm_pv<D, BC>(o_acc, pf, sV + st * KV_BYTES);
                wgmma_commit();
                wgmma_wait<0>();
                pin(o_acc);
                if (lane == 0) mbar_arrive(empty_v + 8 * st);
                loads += n_tiles;
            }

            // the output: wait until this consumer's previous store has read its rows of the O buffer, write, store
            if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            bar_sync(1 + c, 128);
            store_o_tile<D, BR>(sO, o_acc, l, 64 * c + 16 * warp + g, t);
            if (p.lse) store_lse(p.lse + size_t(bh) * p.Sq, m, l, row_a, p.Sq, t);
            fence_proxy_async();
            bar_sync(1 + c, 128);
            if (tid == 0 && wg_row0 < p.Sq) {
#pragma unroll
                for (int cb = 0; cb < CB; ++cb) tma_store_3d(&p.to, sO + cb * BR * 128 + 64 * c * 128, 64 * cb, wg_row0, bh);
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
        }
        if (tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
#else
    __trap();
#endif
}

// Whether rung 10c's three consumers (192-row tiles) beat 10b's two (128 rows) at D = 64, by what an H200 measured with
// idle consumers skipping their work (point 6; docs/perf.md, "Rung 10c: idle consumers skip their work", 28 shapes of
// B·H = 4 to 1,024, S = 512 to 16,384, two passes). Count a call's work in 64-row units (one consumer's share of a
// tile, B·H·⌈Sq/64⌉): a wave of blocks takes #SMs·2 units with two consumers, #SMs·3 with three, and three consumers
// get through their rows 10 % faster (10c / 10b at full waves: 1.10–1.12). Without a mask, waves × rows a wave, over
// 1.10 for three, picked the faster kernel (or one within 1 % of it) at 27 of 28 shapes; the miss, B·H = 64 at
// S = 2,048, cost 1.6 %. Causal, 192-row tiles compute more masked keys: three consumers lose at S ≤ 1,100 at every
// B·H, and lead or tie from S = 2,048 once the call has 15 units an SM (2,048 units on 132 SMs: +4.3 % at S = 4,096,
// level at 2,048); with fewer units 10b leads by 1–26 %. This rule is within 1 % of the faster at all 28 causal shapes.
inline bool three_warpgroups_pay(int BH, int Sq, int Sk, bool causal) {
    const long long units = static_cast<long long>(BH) * ((Sq + 63) / 64), sms = attn::sm_count();
    if (causal) return Sq >= 2048 && Sk >= 2048 && units >= 15 * sms;
    if (Sk < 512) return false;  // not measured below 512 keys
    auto waves_times_rows = [&](long long consumers) {
        return static_cast<double>((units + sms * consumers - 1) / (sms * consumers)) * 64.0 * static_cast<double>(consumers);
    };
    return waves_times_rows(3) / 1.10 < waves_times_rows(2);
}

// Launches the kernel on min(#SMs, tiles) blocks (the caller checked device_is_sm90a() and 16-byte alignment); lse,
// when set, receives each row's log-sum-exp ([B·H][Sq], 4d's forward for training).
template <int D, int BC, int STAGES, bool QREG = false, int NWG = 2>
void persistent_launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                       int H, int Sq, int Sk, bool causal, float* lse = nullptr) {
    constexpr int BR = 64 * NWG;
    constexpr size_t smem = size_t(2 * BR + 2 * STAGES * BC) * D * 2 + 1024 + 256;
    static_assert(smem <= 227 * 1024, "shared memory: fewer stages or a smaller key tile");
    static_assert(NWG == 2 || (NWG == 3 && D == 64 && !QREG), "three consumers fit 160 registers only at D = 64, Q in shared memory");
    static const bool attr = [] {  // once per instantiation: above the default 48 KB of shared memory
        CUDA_CHECK(cudaFuncSetAttribute(persistent_kernel<D, BC, STAGES, QREG, NWG>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        return true;
    }();
    (void)attr;
    if (B * H == 0 || Sq == 0) return;
    Params p = make_params(q, k, v, o, B * H, Sq, Sk, D, causal, BR, BC);
    p.lse = lse;
    PersistentParams pp;
    pp.BH = B * H, pp.row_blocks = (Sq + BR - 1) / BR;
    // causal: groups of heads whose K and V (Sk·D·2 bytes each) fit in 16 MB together, a third of the H100's L2
    pp.heads_per_group = int(std::max<size_t>(1, std::min<size_t>(size_t(B) * H, (size_t(16) << 20) / (size_t(Sk) * D * 4))));
    const int tiles = pp.row_blocks * pp.BH;
    persistent_kernel<D, BC, STAGES, QREG, NWG><<<std::min(tiles, attn::sm_count()), 128 * (NWG + 1), smem>>>(p, pp);
    CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace task4::hopper
