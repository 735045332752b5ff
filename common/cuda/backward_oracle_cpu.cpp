// backward_oracle_cpu.cpp — the CPU side of backward_oracle.h: attention's forward and backward in float64, row by row.
#include "common/cuda/backward_oracle.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace task4 {

using attn::Tensor;

AttentionGrads attention_backward_f64(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout, bool causal) {
    if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape != k.shape || dout.shape != q.shape || k.shape[0] != q.shape[0] ||
        k.shape[1] != q.shape[1] || k.shape[3] != q.shape[3])
        throw std::invalid_argument("attention_backward_f64: q " + attn::shape_str(q.shape) + ", k " + attn::shape_str(k.shape) +
                                    ", v " + attn::shape_str(v.shape) + ", dout " + attn::shape_str(dout.shape) + " do not match");
    const int64_t B = q.shape[0], H = q.shape[1], Sq = q.shape[2], Sk = k.shape[2], D = q.shape[3];
    AttentionGrads g{Tensor(q.shape), Tensor({B, H, Sq}), Tensor(q.shape), Tensor(k.shape), Tensor(k.shape)};
    const double scale = 1.0 / std::sqrt(double(D));
    const size_t sk = size_t(Sk), d_ = size_t(D);
    std::vector<double> p(sk), dp(sk), acc(d_), dk(sk * d_), dv(sk * d_);
    for (int64_t bh = 0; bh < B * H; ++bh) {
        std::fill(dk.begin(), dk.end(), 0.0), std::fill(dv.begin(), dv.end(), 0.0);
        const float* K = k.ptr() + bh * Sk * D;
        const float* V = v.ptr() + bh * Sk * D;
        for (int64_t i = 0; i < Sq; ++i) {
            const float* qi = q.ptr() + (bh * Sq + i) * D;
            const float* gi = dout.ptr() + (bh * Sq + i) * D;
            const int64_t visible = causal ? std::clamp<int64_t>(i + Sk - Sq + 1, 0, Sk) : Sk;
            float* oi = g.o.ptr() + (bh * Sq + i) * D;
            float* dqi = g.dq.ptr() + (bh * Sq + i) * D;
            if (visible == 0) {  // no key: O = 0, lse = +∞, no gradient
                std::fill(oi, oi + D, 0.0f), std::fill(dqi, dqi + D, 0.0f);
                g.lse.data[size_t(bh * Sq + i)] = INFINITY;
                continue;
            }
            double mx = -INFINITY;
            for (int64_t j = 0; j < visible; ++j) {
                double dot = 0;
                for (int64_t d = 0; d < D; ++d) dot += double(qi[d]) * K[j * D + d];
                p[size_t(j)] = dot * scale;
                mx = std::max(mx, p[size_t(j)]);
            }
            double sum = 0;
            for (int64_t j = 0; j < visible; ++j) sum += std::exp(p[size_t(j)] - mx);
            const double lse = mx + std::log(sum);
            g.lse.data[size_t(bh * Sq + i)] = float(lse);
            double delta = 0;
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t j = 0; j < visible; ++j) {
                p[size_t(j)] = std::exp(p[size_t(j)] - lse);
                double dot = 0;
                for (int64_t d = 0; d < D; ++d) {
                    acc[size_t(d)] += p[size_t(j)] * V[j * D + d];
                    dot += double(gi[d]) * V[j * D + d];
                }
                dp[size_t(j)] = dot;
                delta += p[size_t(j)] * dot;
            }
            for (int64_t d = 0; d < D; ++d) oi[d] = float(acc[size_t(d)]);
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t j = 0; j < visible; ++j) {
                const double ds = p[size_t(j)] * (dp[size_t(j)] - delta);
                for (int64_t d = 0; d < D; ++d) {
                    acc[size_t(d)] += ds * K[j * D + d];
                    dk[size_t(j * D + d)] += ds * qi[d];
                    dv[size_t(j * D + d)] += p[size_t(j)] * gi[d];
                }
            }
            for (int64_t d = 0; d < D; ++d) dqi[d] = float(acc[size_t(d)] * scale);
        }
        for (int64_t x = 0; x < Sk * D; ++x) {
            g.dk.data[size_t(bh * Sk * D + x)] = float(dk[size_t(x)] * scale);
            g.dv.data[size_t(bh * Sk * D + x)] = float(dv[size_t(x)]);
        }
    }
    return g;
}

}  // namespace task4
