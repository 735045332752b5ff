// task4.h — Task 4: the fused FlashAttention forward kernel. The frozen interface.
//
// q [B, H, Sq, D], k and v [B, H, Sk, D], o [B, H, Sq, D]: device pointers, row-major float32.
// One fused kernel: scores never leave the chip. Sq ≠ Sk (cross-attention) is allowed. Causal: key
// j is visible to query i iff j ≤ i + (Sk − Sq) (bottom-right aligned, as in FlashAttention; the
// usual lower triangle when Sq == Sk). head_dim D ∈ {32, 64, 96, 128}; anything else throws
// std::invalid_argument naming it. Launches on the default stream, returns without synchronising.
#pragma once

namespace task4 {

void flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                             int D, bool causal);

}  // namespace task4
