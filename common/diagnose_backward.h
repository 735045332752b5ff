// diagnose_backward.h — what a wrong attention gradient is, in words a student can act on (Task 4's backward parts,
// 4c and 4d).
//
// When dV, dK or dQ fails its check, the trusted side computes in double precision, on the same inputs, the gradients
// of the common mistakes — no causal mask; the mask aligned top-left (Sq ≠ Sk); the row term δ left out (dS = P∘dP);
// dS = dP (neither P nor δ); the 1/√D of dK or dQ left out; dK and dV written into each other — and names the one the
// failing gradient matches. Where none matches, it says where the error lives (which keys or query rows, which heads)
// and what the gradients that passed already prove: dV right means P is right; dK right as well means dS is right, so
// a wrong dQ is in dQ's own path (its sum over the key tiles).
#pragma once
#include <string>

#include "common/compare.h"
#include "common/tensor.h"

namespace attn {

// grad: "dV", "dK" or "dQ" (the gradient that failed; the ones before it in that order passed). got: that gradient,
// [B, H, Sk, D] for dV and dK, [B, H, Sq, D] for dQ; q, dout [B, H, Sq, D], k, v [B, H, Sk, D] as the case gave them.
// A sentence for the failure's reason, or "" when the shapes are too large to try the variants.
std::string diagnose_backward(const std::string& grad, const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v,
                              const Tensor& dout, bool causal, Tolerance tol);

}  // namespace attn
