// test_diagnose_backward.cpp — the backward's diagnosis (diagnose_backward.h) names each common mistake from its own
// output and locates what matches none. Part of the harness unit tests (make unit).
#include <catch2/catch.hpp>
#include <cmath>

#include "common/cuda/backward_oracle.h"
#include "common/diagnose_backward.h"
#include "common/seed.h"

using Catch::Matchers::Contains;

TEST_CASE("diagnose_backward: a wrong gradient is named by the mistake it matches, or located", "[harness]") {
    auto g = attn::rng_for("test.diagnose_backward");
    const attn::Tensor q = attn::random_tensor(g, {1, 2, 23, 16}), k = attn::random_tensor(g, {1, 2, 31, 16}),
                       v = attn::random_tensor(g, {1, 2, 31, 16}), dout = attn::random_tensor(g, {1, 2, 23, 16});
    const attn::Tolerance tol{2e-5, 1e-4};
    const task4::AttentionGrads right = task4::attention_backward_f64(q, k, v, dout, true);
    const task4::AttentionGrads full = task4::attention_backward_f64(q, k, v, dout, false);
    // causal asked, no mask applied: each gradient names it
    CHECK_THAT(attn::diagnose_backward("dV", full.dv, q, k, v, dout, true, tol), Contains("without the causal mask"));
    CHECK_THAT(attn::diagnose_backward("dQ", full.dq, q, k, v, dout, true, tol), Contains("without the causal mask"));
    // dK without its 1/√D, dV written where dK goes
    attn::Tensor unscaled = right.dk;
    for (float& x : unscaled.data) x *= 4.0f;  // √16
    CHECK_THAT(attn::diagnose_backward("dK", unscaled, q, k, v, dout, true, tol), Contains("dK without its 1/√D"));
    CHECK_THAT(attn::diagnose_backward("dK", right.dv, q, k, v, dout, true, tol), Contains("dV's values"));
    // the row term left out: dK = Σ_i P∘dP · q_i / √D, computed here the plainest way
    attn::Tensor no_delta(right.dk.shape);
    const int Sq = 23, Sk = 31, D = 16;
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < Sq; ++i) {
            const float* qi = q.ptr() + (h * Sq + i) * D;
            const float* gi = dout.ptr() + (h * Sq + i) * D;
            double m = -INFINITY, l = 0;
            std::vector<double> s(Sk), dp(Sk);
            for (int j = 0; j <= i + Sk - Sq; ++j) {
                double x = 0, y = 0;
                for (int d = 0; d < D; ++d) x += double(qi[d]) * k.ptr()[(h * Sk + j) * D + d], y += double(gi[d]) * v.ptr()[(h * Sk + j) * D + d];
                s[size_t(j)] = x / 4.0, dp[size_t(j)] = y, m = std::max(m, s[size_t(j)]);
            }
            for (int j = 0; j <= i + Sk - Sq; ++j) l += std::exp(s[size_t(j)] - m);
            for (int j = 0; j <= i + Sk - Sq; ++j)
                for (int d = 0; d < D; ++d)
                    no_delta.data[size_t((h * Sk + j) * D + d)] += float(std::exp(s[size_t(j)] - m) / l * dp[size_t(j)] * qi[d] / 4.0);
        }
    CHECK_THAT(attn::diagnose_backward("dK", no_delta, q, k, v, dout, true, tol), Contains("the row term left out"));
    // one key's dV wrong: located, and what the passing gradients prove is said for dQ
    attn::Tensor one_key = right.dv;
    for (int d = 0; d < D; ++d) one_key.data[size_t(7 * D + d)] += 1.0f;
    CHECK_THAT(attn::diagnose_backward("dV", one_key, q, k, v, dout, true, tol), Contains("keys 7 only") && Contains("heads 0 only"));
    attn::Tensor lost = right.dq;
    for (int d = 0; d < D; ++d) lost.data[size_t(5 * D + d)] *= 0.5f;
    CHECK_THAT(attn::diagnose_backward("dQ", lost, q, k, v, dout, true, tol), Contains("query rows 5 only") && Contains("atomicAdd"));
    // the right answer is no mistake; an all-zero output is left to the comparison
    CHECK(attn::diagnose_backward("dV", right.dv, q, k, v, dout, true, tol).empty());
    CHECK(attn::diagnose_backward("dQ", attn::Tensor(right.dq.shape), q, k, v, dout, true, tol).empty());
}
