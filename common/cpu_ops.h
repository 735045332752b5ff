// cpu_ops.h — small CPU operations the harness performs around the student's code.
#pragma once
#include "tensor.h"

namespace attn {

// y[n, o] = Σ_i x[n, i] · w[o, i]   (x: [N, in], w: [out, in] as torch.nn.Linear stores it),
// accumulated in double. Leading dimensions of x are kept: [..., in] → [..., out].
Tensor linear_nt(const Tensor& x, const Tensor& w);

// Attention in double precision, the oracle for fresh inputs: q [BH, Sq, D], k and v [BH, Sk, D]
// → [BH, Sq, D]. Causal: key j visible to query i iff j ≤ i + Sk − Sq; a query with no visible
// key gets zeros. Leading dimensions may be split any way (e.g. [B, H, S, D]).
Tensor attention_f64(const Tensor& q, const Tensor& k, const Tensor& v, bool causal);

// [B, S, H·D] ↔ [B, H, S, D], for oracles over the [B, S, hidden] layout.
Tensor to_heads(const Tensor& x, int H);
Tensor from_heads(const Tensor& xh);

}  // namespace attn
