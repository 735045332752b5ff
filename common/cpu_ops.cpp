// cpu_ops.cpp — see cpu_ops.h.
#include "cpu_ops.h"

#include <stdexcept>

namespace attn {

Tensor linear_nt(const Tensor& x, const Tensor& w) {
    if (w.shape.size() != 2 || x.shape.empty() || x.shape.back() != w.shape[1])
        throw std::invalid_argument("linear_nt: x [..., in] and w [out, in] do not match: " + shape_str(x.shape) +
                                    " vs " + shape_str(w.shape));
    const int64_t in = w.shape[1], out = w.shape[0], rows = x.size() / in;
    Shape ys = x.shape;
    ys.back() = out;
    Tensor y(ys);
    for (int64_t n = 0; n < rows; ++n)
        for (int64_t o = 0; o < out; ++o) {
            double acc = 0;
            for (int64_t i = 0; i < in; ++i) acc += double(x.data[n * in + i]) * double(w.data[o * in + i]);
            y.data[n * out + o] = float(acc);
        }
    return y;
}

}  // namespace attn
