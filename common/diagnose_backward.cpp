// diagnose_backward.cpp — see diagnose_backward.h.
#include "common/diagnose_backward.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "common/diagnose.h"

namespace attn {
namespace {

// One way to compute the backward, right or wrong.
struct Variant {
    std::string what;
    enum class Mask { as_asked, none, top_left } mask = Mask::as_asked;
    bool row_term = true;     // dS = P∘(dP − δ); false: P∘dP
    bool ds_has_p = true;     // false: dS = dP over every key (neither P nor δ)
    bool dk_scaled = true, dq_scaled = true;  // the 1/√D of dK and dQ
    bool swap_dk_dv = false;                  // dK written with dV's values and dV with dK's
};

struct Grads {
    std::vector<double> dq, dk, dv;  // the first `heads` heads
};

Grads run_variant(const Variant& var, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout, bool causal,
                  const AttentionSizes& s, int64_t heads) {
    const double scale = 1.0 / std::sqrt(double(s.D));
    const int64_t off = s.Sk - s.Sq;
    Grads g{std::vector<double>(size_t(heads * s.Sq * s.D)), std::vector<double>(size_t(heads * s.Sk * s.D)),
            std::vector<double>(size_t(heads * s.Sk * s.D))};
    std::vector<double> p(size_t(s.Sk)), dp(size_t(s.Sk));
    for (int64_t h = 0; h < heads; ++h) {
        const float *Q = q.ptr() + h * s.Sq * s.D, *K = k.ptr() + h * s.Sk * s.D, *V = v.ptr() + h * s.Sk * s.D,
                    *G = dout.ptr() + h * s.Sq * s.D;
        double *dQ = g.dq.data() + h * s.Sq * s.D, *dK = g.dk.data() + h * s.Sk * s.D, *dV = g.dv.data() + h * s.Sk * s.D;
        for (int64_t i = 0; i < s.Sq; ++i) {
            auto seen = [&](int64_t j) {
                if (!causal || var.mask == Variant::Mask::none) return true;
                return var.mask == Variant::Mask::top_left ? j <= i : j <= i + off;
            };
            double m = -INFINITY, l = 0;
            for (int64_t j = 0; j < s.Sk; ++j) {
                double x = 0;
                for (int64_t d = 0; d < s.D; ++d) x += double(Q[i * s.D + d]) * K[j * s.D + d];
                p[size_t(j)] = seen(j) ? x * scale : -INFINITY;
                m = std::max(m, p[size_t(j)]);
            }
            for (int64_t j = 0; j < s.Sk; ++j) l += m == -INFINITY ? 0.0 : std::exp(p[size_t(j)] - m);
            double delta = 0;
            for (int64_t j = 0; j < s.Sk; ++j) {
                p[size_t(j)] = m == -INFINITY ? 0.0 : std::exp(p[size_t(j)] - m) / l;
                double x = 0;
                for (int64_t d = 0; d < s.D; ++d) x += double(G[i * s.D + d]) * V[j * s.D + d];
                dp[size_t(j)] = x;
                delta += p[size_t(j)] * x;  // = Σ_d dO·O
            }
            for (int64_t j = 0; j < s.Sk; ++j) {
                const double ds = var.ds_has_p ? p[size_t(j)] * (dp[size_t(j)] - (var.row_term ? delta : 0.0)) : dp[size_t(j)];
                for (int64_t d = 0; d < s.D; ++d) {
                    dQ[i * s.D + d] += ds * K[j * s.D + d] * (var.dq_scaled ? scale : 1.0);
                    dK[j * s.D + d] += ds * Q[i * s.D + d] * (var.dk_scaled ? scale : 1.0);
                    dV[j * s.D + d] += p[size_t(j)] * G[i * s.D + d];
                }
            }
        }
    }
    if (var.swap_dk_dv) std::swap(g.dk, g.dv);
    return g;
}

// The largest error of got (its first `heads` heads) against want, in tolerances (NaN counts as ∞).
double worst(const Tensor& got, const std::vector<double>& want, Tolerance tol) {
    double w = 0;
    for (size_t e = 0; e < want.size(); ++e) {
        const double r = in_tolerances(got.ptr()[e], want[e], tol);
        if (!(r <= w)) w = std::isnan(r) ? INFINITY : std::max(w, r);
    }
    return w;
}

const std::vector<double>& pick(const Grads& g, const std::string& grad) { return grad == "dQ" ? g.dq : grad == "dK" ? g.dk : g.dv; }

}  // namespace

std::string diagnose_backward(const std::string& grad, const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v,
                              const Tensor& dout, bool causal, Tolerance tol) {
    if (q.shape.size() < 2 || k.shape.size() < 2 || (grad != "dQ" && grad != "dK" && grad != "dV")) return "";
    const AttentionSizes s = attention_sizes(q, k);
    const int64_t rows = grad == "dQ" ? s.Sq : s.Sk;
    if (s.Sq == 0 || s.Sk == 0 || got.size() != s.BH * rows * s.D) return "";
    // ~10⁸ multiply-adds a variant at most (a failing case costs a few seconds): the first heads, as many as fit
    const int64_t per_head = s.Sq * s.Sk * s.D * 5, heads = std::clamp<int64_t>(100000000 / std::max<int64_t>(per_head, 1), 0, s.BH);
    if (heads == 0 || is_constant(got.ptr(), got.size())) return "";  // an all-zero or constant output is named by the comparison
    const std::string on = heads < s.BH ? fmt::format(" (tried on the first {} of {} heads)", heads, s.BH) : "";
    std::vector<Variant> variants;
    if (causal) {
        variants.push_back({"the gradient without the causal mask (P over every key)", Variant::Mask::none});
        if (s.Sq != s.Sk)
            variants.push_back({"the gradient with the causal mask aligned top-left (key j ≤ query i) instead of bottom-right "
                                "(j ≤ i + Sk − Sq)", Variant::Mask::top_left});
    }
    if (grad != "dV") {
        variants.push_back({"the gradient with the row term left out (dS = P∘dP instead of P∘(dP − δ), δ = rowsum(dO∘O))",
                            Variant::Mask::as_asked, false});
        variants.push_back({"the gradient with dS = dP (neither P nor the row term: dS = P∘(dP − δ))", Variant::Mask::as_asked,
                            true, false});
    }
    if (grad == "dK") variants.push_back({"dK without its 1/√D (dK = dSᵀ·Q/√D)", Variant::Mask::as_asked, true, true, false});
    if (grad == "dQ") variants.push_back({"dQ without its 1/√D (dQ = dS·K/√D)", Variant::Mask::as_asked, true, true, true, false});
    if (grad != "dQ") {
        Variant swapped{grad == "dK" ? "dV's values (dK and dV written into each other?)" : "dK's values (dK and dV written into each other?)"};
        swapped.swap_dk_dv = true;
        variants.push_back(swapped);
    }
    for (const Variant& var : variants) {
        const double err = worst(got, pick(run_variant(var, q, k, v, dout, causal, s, heads), grad), tol);
        if (err <= 1.0)
            return fmt::format("diagnosis: {} is {} — every element within the tolerance of that answer (its largest error "
                               "{:.2g} of it){}", grad, var.what, err, on);
    }
    // Where it is wrong, against the right answer
    const std::vector<double> right = pick(run_variant({"right"}, q, k, v, dout, causal, s, heads), grad);
    std::set<int64_t> bad_rows, bad_heads;
    int64_t nonfinite = 0;
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t d = 0; d < s.D; ++d) {
                const size_t e = size_t((h * rows + r) * s.D + d);
                nonfinite += !std::isfinite(got.ptr()[e]);
                if (!within(got.ptr()[e], right[e], tol)) bad_rows.insert(r), bad_heads.insert(h);
            }
    if (bad_rows.empty()) return "";  // the failure is in heads not tried
    const std::string noun = grad == "dQ" ? "query rows" : "keys";
    const std::string r = failing_only(bad_rows, rows, noun), hs = failing_only(bad_heads, heads, "heads", false);
    std::string what = fmt::format("no common mistake matches; the failing elements are in {}, {}", r.empty() ? "every one of the " + noun : r,
                                   hs.empty() ? "every head" : hs);
    if (nonfinite > 0) what += fmt::format("; {} of them NaN or Inf (never written, or read past the end?)", nonfinite);
    if (grad == "dK")
        what += ". dV is right, so P is: the fault is in dS = P∘(dP − δ) (dP = dO·Vᵀ, δ) or in dK's own sum dSᵀ·Q/√D";
    if (grad == "dQ")
        what += ". dK and dV are right, so P and dS are: the fault is in dQ's own path — dS·K/√D summed over every key "
                "tile, which the key tiles of one head add into the same rows at the same time (atomicAdd, or a second "
                "pass that owns the query rows)";
    return "diagnosis: " + what + on;
}

}  // namespace attn
