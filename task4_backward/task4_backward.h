// task4_backward.h — Task 4's second bonus part (4c): FlashAttention-2's backward pass. The frozen interface.
//
// float32 on CUDA cores, like Task 4. Layouts as in task4.h: q, o, dout, dq [B, H, Sq, D]; k, v, dk, dv
// [B, H, Sk, D]; lse [B, H, Sq]; all device pointers, row-major float32. Scale 1/√D. Causal: key j is
// visible to query i iff j ≤ i + (Sk − Sq) (bottom-right aligned, as in task4.h). head_dim D ∈ {32, 64,
// 96, 128}; anything else, a non-positive size or a null pointer throws std::invalid_argument naming it.
// Both launch on the default stream and return without synchronising. Neither may hold an Sq × Sk buffer.
//
// The forward writes o and each row's log-sum-exp of its scaled scores, lse[i] = m_i + log(l_i): the one
// number per row the backward needs to recompute P = exp(S − lse) without the running max and sum. A row
// that sees no key gets o = 0 and lse = +∞ (as FlashAttention-2 stores it), so that exp(s − lse) = 0 there
// and the backward needs no special case.
//
// The backward (FlashAttention-2, Algorithm 2) takes q, k, v, the forward's o and lse and the output's
// gradient dout, and writes dq, dk and dv (it overwrites them: a kernel that accumulates dq with atomics
// zeroes it first). A row that sees no key gives zero gradients; a key that no row sees gets dk = dv = 0.
// task4/README.md ("Bonus: the backward pass") gives the plan, the tolerance and the ladder.
#pragma once

namespace task4 {

void flash_attention_forward_lse(const float* q, const float* k, const float* v, float* o, float* lse, int B, int H,
                                 int Sq, int Sk, int D, bool causal);

void flash_attention_backward(const float* q, const float* k, const float* v, const float* o, const float* dout,
                              const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D,
                              bool causal);

}  // namespace task4
