// task4_bf16.h — Task 4's bonus part: FlashAttention forward in bf16 on tensor cores. The frozen interface.
//
// q [B, H, Sq, D], k and v [B, H, Sk, D], o [B, H, Sq, D]: device pointers, row-major __nv_bfloat16.
// Softmax statistics (running max and sum) and every accumulation in float32; only the inputs and
// the output are bf16. Scale 1/√D. One fused kernel: scores never leave the chip. Sq ≠ Sk allowed.
// Causal: key j is visible to query i iff j ≤ i + (Sk − Sq) (bottom-right aligned, as in Task 4); a
// query row that sees no key gets zeros. head_dim D ∈ {64, 128}; anything else throws
// std::invalid_argument naming it. Launches on the default stream, returns without synchronising.
// task4/README.md ("Bonus: bf16 on tensor cores") gives the plan, the tolerance and the ladder.
#pragma once
#include <cuda_bf16.h>

namespace task4 {

void flash_attention_forward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                  __nv_bfloat16* o, int B, int H, int Sq, int Sk, int D, bool causal);

}  // namespace task4
