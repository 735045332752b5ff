// ladder_bf16.h — the bf16 ladder's rungs (course staff material; not in the student kit), each a complete,
// correct kernel behind the interface of task4/task4_bf16.h. Timed by `make ladder-task4-bf16` (a GPU).
//   wmma_forward                 rung 1 (wmma_bf16.cu): WMMA fragments, S and O in shared memory (the skeleton's plan)
//   launch<D, 4, 64, false>      rung 2 (mma_bf16.cu): mma.sync m16n8k16 + ldmatrix, Q/S/O in registers (FA2's layout)
//   launch<D, W, 64, true>       rung 3 (mma_bf16.cu): + XOR-swizzled shared memory and cp.async double buffering
//   launch_fa2<D, W, M, BC, QREG, LAZY> rung 4 (task4/reference/flash_attention_bf16.cu, the reference): FA2's warp
//                                layout, M·16 rows a warp (each K/V fragment feeds M·2 MMAs), ex2.approx.ftz, per-warp
//                                causal skip, coalesced output; LAZY = rung 5 (rescale only on a new maximum)
#pragma once
#include <cuda_bf16.h>

namespace task4 {
namespace bf16_detail {  // mma_bf16.cu (launch) and task4/reference/flash_attention_bf16.cu (launch_fa2) instantiate the combinations they list
template <int D, int WARPS, int BC, bool PIPELINED>
void launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H,
            int Sq, int Sk, bool causal);
template <int D, int WARPS, int MREP, int BC, bool QREG, bool LAZY>
void launch_fa2(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                int H, int Sq, int Sk, bool causal);
}
namespace ladder_bf16 {
void wmma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                  int H, int Sq, int Sk, int D, bool causal);
}  // namespace ladder_bf16
}  // namespace task4
