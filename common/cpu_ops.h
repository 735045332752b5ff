// cpu_ops.h — small CPU operations the harness performs around the student's code.
#pragma once
#include "tensor.h"

namespace attn {

// y[n, o] = Σ_i x[n, i] · w[o, i]   (x: [N, in], w: [out, in] as torch.nn.Linear stores it),
// accumulated in double. Leading dimensions of x are kept: [..., in] → [..., out].
Tensor linear_nt(const Tensor& x, const Tensor& w);

}  // namespace attn
