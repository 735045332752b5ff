// ladder_bf16.h — the bf16 ladder's rungs (course staff material; not in the student kit), each a complete,
// correct kernel behind the interface of task4_bf16/task4_bf16.h. Timed by `make ladder-task4-bf16` (a GPU).
//   wmma_forward                 rung 1 (wmma_bf16.cu): WMMA fragments, S and O in shared memory (the skeleton's plan)
//   launch<D, 4, 64, false>      rung 2 (mma_bf16.cu): mma.sync m16n8k16 + ldmatrix, Q/S/O in registers (FA2's layout)
//   launch<D, W, 64, true>       rung 3 (mma_bf16.cu): + XOR-swizzled shared memory and cp.async double buffering
//   launch_fa2<D, W, M, BC, QREG, LAZY> rung 4 (task4_bf16/reference/flash_attention_bf16.cu, the reference): FA2's warp
//                                layout, M·16 rows a warp (each K/V fragment feeds M·2 MMAs), ex2.approx.ftz, per-warp
//                                causal skip, coalesced output; LAZY = rung 5 (rescale only on a new maximum)
// The Hopper rungs (sm_90a; compute capability 9.0 only, each throws elsewhere; hopper_bf16.cuh holds what they share):
//   wgmma_forward                rung 6: wgmma from shared-memory descriptors (128-byte swizzle), 2 warpgroups × 64 rows
//   tma_forward                  rung 7: + TMA loads and stores, an mbarrier per stage and operand
//   warp_specialized_forward     rung 8: + a producer warpgroup, consumers with setmaxnreg, full/empty barriers
//   pingpong_forward             rung 9: + ping-pong of the two consumers and the next Q·Kᵀ before the softmax
//                                (FlashAttention-3's schedule); variants below
//   persistent_forward           rung 10: + persistent blocks: the next tile's loads and this one's store overlap
//   persistent_three_forward     rung 10c: D = 64 on three consumer warpgroups (192 rows), FlashAttention-3's shape
#pragma once
#include <cuda_bf16.h>

#include <array>

namespace task4 {
namespace bf16_detail {  // mma_bf16.cu (launch) and task4_bf16/reference/flash_attention_bf16.cu (launch_fa2) instantiate the combinations they list
template <int D, int WARPS, int BC, bool PIPELINED>
void launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
            int Sq, int Sk, bool causal);
template <int D, int WARPS, int MREP, int BC, bool QREG, bool LAZY>
void launch_fa2(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                int H, int Sq, int Sk, bool causal, float* lse = nullptr);
}
namespace ladder_bf16 {
void wmma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                  int H, int Sq, int Sk, int D, bool causal);
using ForwardBf16 = void(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                         int, int, bool);
ForwardBf16 wgmma_forward, tma_forward, warp_specialized_forward;
ForwardBf16 pingpong_forward;              // rung 9: BC = 128, ping-pong and intra-warpgroup overlap
ForwardBf16 pingpong_no_overlap_forward;   // rung 9 without the intra-warpgroup overlap (ping-pong alone)
ForwardBf16 pingpong_bc176_forward;        // rung 9 with key tiles of 176 (FlashAttention-3's choice at D = 128)
ForwardBf16 pingpong_stages_forward;       // rung 9 with one more K/V stage (3 at D = 128, 4 at D = 64)
ForwardBf16 pingpong_qreg_forward;         // rung 9 with one more stage and Q's A fragments in registers
ForwardBf16 persistent_forward;            // rung 10: rung 9 as a persistent kernel (one block per SM, tile list)
ForwardBf16 persistent_qreg_forward;       // rung 10 with Q's A fragments in registers
ForwardBf16 persistent_three_forward;      // rung 10c: D = 64 on three consumer warpgroups, 192-row tiles (D = 128: 10b)
bool hopper_rungs_available();             // an sm_90a build on a compute capability 9.0 GPU
// wgmma_selftest.cu: the two GEMMs alone against the CPU: max relative error of S = Q·Kᵀ, of S with Q's fragments in
// registers, of O = P·V, and of O with V's descriptor offsets swapped (which must be wrong)
std::array<double, 4> wgmma_selftest();
}  // namespace ladder_bf16
}  // namespace task4
