// cpu_ops.cpp — see cpu_ops.h.
#include "cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

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

Tensor attention_f64(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
    const int64_t D = q.shape.back(), Sq = q.shape[q.shape.size() - 2], Sk = k.shape[k.shape.size() - 2];
    const int64_t BH = q.size() / (Sq * D);
    if (k.size() != BH * Sk * D || v.shape != k.shape)
        throw std::invalid_argument("attention_f64: q " + shape_str(q.shape) + ", k " + shape_str(k.shape) + ", v " +
                                    shape_str(v.shape) + " do not match");
    Tensor o(q.shape);
    std::vector<double> p = std::vector<double>(size_t(Sk)), acc = std::vector<double>(size_t(D));
    const double scale = 1.0 / std::sqrt(double(D));
    for (int64_t bh = 0; bh < BH; ++bh)
        for (int64_t i = 0; i < Sq; ++i) {
            const float* qi = q.ptr() + (bh * Sq + i) * D;
            const int64_t visible = causal ? std::min(Sk, i + Sk - Sq + 1) : Sk;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < visible; ++j) {
                const float* kj = k.ptr() + (bh * Sk + j) * D;
                double dot = 0;
                for (int64_t d = 0; d < D; ++d) dot += double(qi[d]) * kj[d];
                p[size_t(j)] = dot * scale;
                mx = std::max(mx, p[size_t(j)]);
            }
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t j = 0; j < visible; ++j) {
                const double e = std::exp(p[size_t(j)] - mx);
                sum += e;
                const float* vj = v.ptr() + (bh * Sk + j) * D;
                for (int64_t d = 0; d < D; ++d) acc[size_t(d)] += e * vj[d];
            }
            for (int64_t d = 0; d < D; ++d) o.data[size_t((bh * Sq + i) * D + d)] = visible > 0 ? float(acc[size_t(d)] / sum) : 0.f;
        }
    return o;
}

Tensor to_heads(const Tensor& x, int H) {
    const int64_t B = x.shape[0], S = x.shape[1], D = x.shape[2] / H;
    Tensor out({B, H, S, D});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t d = 0; d < D; ++d)
                    out.data[size_t(((b * H + h) * S + s) * D + d)] = x.data[size_t(((b * S + s) * H + h) * D + d)];
    return out;
}

Tensor from_heads(const Tensor& xh) {
    const int64_t B = xh.shape[0], H = xh.shape[1], S = xh.shape[2], D = xh.shape[3];
    Tensor out({B, S, H * D});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t s = 0; s < S; ++s)
                for (int64_t d = 0; d < D; ++d)
                    out.data[size_t(((b * S + s) * H + h) * D + d)] = xh.data[size_t(((b * H + h) * S + s) * D + d)];
    return out;
}

}  // namespace attn
