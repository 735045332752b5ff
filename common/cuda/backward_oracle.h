// backward_oracle.h — attention's forward and backward in double precision, the trusted side's oracle for Task 4's
// backward bonus (4c): on the CPU for small shapes (fresh inputs), on the GPU for long ones. Both follow the
// definitions the plainest way — per query row the scores s = q·Kᵀ/√D (−∞ where masked), lse = log Σ exp(s),
// P = exp(s − lse), O = P·V, dP = dO·Vᵀ, D_i = Σ_j P_ij·dP_ij, dS = P∘(dP − D_i), dQ = dS·K/√D, dK = dSᵀ·Q/√D,
// dV = Pᵀ·dO — with every score materialised (per row on the CPU, per head on the GPU): slow, easy to trust.
// Causal: key j is visible to query i iff j ≤ i + (Sk − Sq); a row that sees no key has O = 0, lse = +∞ and zero
// gradients.
#pragma once
#include "common/tensor.h"

namespace task4 {

struct AttentionGrads {
    attn::Tensor o, lse, dq, dk, dv;  // lse: [B, H, Sq]
};

// q, dout [B, H, Sq, D]; k, v [B, H, Sk, D] (host, float32; computed in float64, returned rounded to float32).
AttentionGrads attention_backward_f64(const attn::Tensor& q, const attn::Tensor& k, const attn::Tensor& v,
                                      const attn::Tensor& dout, bool causal);

// The same on the GPU, head by head: device pointers of BH heads (float32 in and out, float64 inside); needs
// 2·Sq·Sk doubles of device memory for one head's P and dS (allocated here).
void attention_backward_f64_gpu(const float* q, const float* k, const float* v, const float* dout, float* o, float* lse,
                                float* dq, float* dk, float* dv, int BH, int Sq, int Sk, int D, bool causal);

// Each row's lse in float32 on the GPU (one warp a row; +∞ for a row that sees no key): a benchmark's input for the
// heads the float64 oracle does not compute. q [BH, Sq, D], k [BH, Sk, D] device pointers.
void attention_lse_f32_gpu(const float* q, const float* k, float* lse, int BH, int Sq, int Sk, int D, bool causal);

}  // namespace task4
