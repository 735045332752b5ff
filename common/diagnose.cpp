// diagnose.cpp — see diagnose.h. Every variant is attention in double precision with one mistake built in.
#include "common/diagnose.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "common/cpu_ops.h"

namespace attn {
namespace {

// Which keys row i sees, off = Sk − Sq: the course's rule is j ≤ i + off (bottom-right).
enum class Mask { none, bottom_right, top_left, one_too_few, one_too_many };

struct Variant {
    std::string what;  // "attention without the causal mask"
    Mask mask = Mask::bottom_right;
    double scale = 0;         // 0: 1/√D
    int64_t keys = -1;        // keys used (-1: all Sk)
    bool k_untransposed = false;  // K's [Sk, D] memory read as [D, Sk]
    bool softmax_over_queries = false;
    // A tiled kernel that never reads a row block's last partial key tile: rows in blocks of row_tile, keys in tiles
    // of key_tile; a block reads keys up to its last visible one (causal) and drops those past the last whole tile.
    int64_t row_tile = 0, key_tile = 0;
};

bool visible(Mask m, int64_t i, int64_t j, int64_t off) {
    switch (m) {
        case Mask::none: return true;
        case Mask::bottom_right: return j <= i + off;
        case Mask::top_left: return j <= i;
        case Mask::one_too_few: return j < i + off;
        case Mask::one_too_many: return j <= i + off + 1;
    }
    return true;
}

// The keys row i's tiled kernel reads: all of them, unless the variant drops a row block's partial key tile.
int64_t read_up_to(const Variant& v, int64_t i, const AttentionSizes& s) {
    if (v.key_tile == 0) return s.Sk;
    const int64_t block_end = std::min((i / v.row_tile + 1) * v.row_tile, s.Sq);
    const int64_t end = v.mask == Mask::bottom_right ? std::clamp<int64_t>(block_end + s.Sk - s.Sq, 0, s.Sk) : s.Sk;
    return end / v.key_tile * v.key_tile;
}

// The variant's output for the first `heads` heads: [heads, Sq, D] (a head whose rows see no key: zeros).
std::vector<double> run_variant(const Variant& v, const Tensor& q, const Tensor& k, const Tensor& val, const AttentionSizes& s,
                                int64_t heads) {
    const int64_t keys = v.keys < 0 ? s.Sk : v.keys, off = s.Sk - s.Sq;
    const double scale = v.scale > 0 ? v.scale : 1.0 / std::sqrt(double(s.D));
    std::vector<double> out(size_t(heads * s.Sq * s.D), 0.0), p(size_t(s.Sq * keys));
    for (int64_t h = 0; h < heads; ++h) {
        const float *qh = q.ptr() + h * s.Sq * s.D, *kh = k.ptr() + h * s.Sk * s.D, *vh = val.ptr() + h * s.Sk * s.D;
        for (int64_t i = 0; i < s.Sq; ++i)
            for (int64_t j = 0; j < keys; ++j) {
                double dot = 0;
                for (int64_t d = 0; d < s.D; ++d)
                    dot += double(qh[i * s.D + d]) * (v.k_untransposed ? kh[d * s.Sk + j] : kh[j * s.D + d]);
                p[size_t(i * keys + j)] = visible(v.mask, i, j, off) && j < read_up_to(v, i, s) ? dot * scale : -INFINITY;
            }
        // softmax along the keys (rows of p), or along the queries (its columns)
        const int64_t lines = v.softmax_over_queries ? keys : s.Sq, along = v.softmax_over_queries ? s.Sq : keys;
        auto at = [&](int64_t line, int64_t x) -> double& {
            return v.softmax_over_queries ? p[size_t(x * keys + line)] : p[size_t(line * keys + x)];
        };
        for (int64_t line = 0; line < lines; ++line) {
            double mx = -INFINITY, sum = 0;
            for (int64_t x = 0; x < along; ++x) mx = std::max(mx, at(line, x));
            for (int64_t x = 0; x < along; ++x) {
                at(line, x) = mx == -INFINITY ? 0.0 : std::exp(at(line, x) - mx);  // a line that sees nothing: zeros
                sum += at(line, x);
            }
            for (int64_t x = 0; x < along; ++x) at(line, x) = sum > 0 ? at(line, x) / sum : 0.0;
        }
        double* oh = out.data() + h * s.Sq * s.D;
        for (int64_t i = 0; i < s.Sq; ++i)
            for (int64_t j = 0; j < keys; ++j)
                if (const double w = p[size_t(i * keys + j)]; w != 0)
                    for (int64_t d = 0; d < s.D; ++d) oh[i * s.D + d] += w * vh[j * s.D + d];
    }
    return out;
}

// The largest error of got against `want` over [first head, first + heads), in tolerances (NaN counts as ∞).
double worst(const Tensor& got, int64_t got_head, const std::vector<double>& want, int64_t want_head, int64_t heads,
             const AttentionSizes& s, Tolerance tol) {
    const int64_t n = s.Sq * s.D;
    double w = 0;
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t e = 0; e < n; ++e) {
            const double g = got.ptr()[(got_head + h) * n + e], c = want[size_t((want_head + h) * n + e)];
            const double r = in_tolerances(g, c, tol);
            if (!(r <= w)) w = std::isnan(r) ? INFINITY : std::max(w, r);
        }
    return w;
}

std::vector<Variant> variants(const AttentionSizes& s, bool causal, const std::vector<std::pair<int64_t, int64_t>>& tiles) {
    std::vector<Variant> v;
    if (causal) {
        v.push_back({"attention without the causal mask", Mask::none});
        if (s.Sq != s.Sk) v.push_back({"the causal mask aligned top-left (key j seen by query i iff j ≤ i; the course aligns it "
                                       "bottom-right: j ≤ i + Sk − Sq)", Mask::top_left});
        v.push_back({"the causal mask off by one: each query misses its own diagonal key (j < i + Sk − Sq)", Mask::one_too_few});
        v.push_back({"the causal mask off by one: each query also sees the next key (j ≤ i + Sk − Sq + 1)", Mask::one_too_many});
    } else {
        v.push_back({"attention with a causal mask, which this case did not ask for", Mask::bottom_right});
    }
    const Mask m = causal ? Mask::bottom_right : Mask::none;
    v.push_back({"attention without the 1/√D scale", m, 1.0});
    v.push_back({fmt::format("attention scaled by 1/D instead of 1/√D"), m, 1.0 / double(s.D)});
    // the last partial tile of keys never read: one variant per number of keys kept, naming the tile sizes that give it
    std::vector<std::pair<int64_t, std::vector<int64_t>>> kept;  // keys kept, tile sizes
    std::set<int64_t> key_tiles = {16, 32, 64, 128};
    for (const auto& tile : tiles) key_tiles.insert(tile.second);
    for (int64_t t : key_tiles) {
        if (s.Sk <= t || s.Sk % t == 0) continue;
        const int64_t keep = s.Sk / t * t;
        auto it = std::find_if(kept.begin(), kept.end(), [&](const auto& e) { return e.first == keep; });
        if (it == kept.end()) kept.push_back({keep, {t}});
        else it->second.push_back(t);
    }
    for (const auto& [keep, tiles] : kept) {
        const int64_t dropped = s.Sk - keep;
        v.push_back({fmt::format("attention with the last {} key{} dropped: the partial tile past the last whole tile of {} keys "
                                 "is never read", dropped, dropped == 1 ? "" : "s", fmt::join(tiles, " or ")),
                     m, 0, keep});
    }
    if (causal)  // the same mistake in a causal kernel: each row block drops the partial tile at its own last key
        for (const auto& [br, bc] : tiles)
            v.push_back({fmt::format("attention where each block of {} query rows drops the partial tile of keys past its last "
                                     "whole tile of {} (the keys after it that the block's rows may see are never read)", br, bc),
                         m, 0, -1, false, false, br, bc});
    if (s.Sq < s.Sk) v.push_back({"attention over the first Sq keys only (Sk ignored, or Sq and Sk swapped)", m, 0, s.Sq});
    const bool said = std::any_of(kept.begin(), kept.end(), [&](const auto& e) { return e.first == s.Sk - 1; });
    if (!causal && s.Sk > 1 && !said)  // (one key short is a partial tile of one key above, where there is one)
        v.push_back({"attention without the last key (one position too few: the newest token missed?)", m, 0, s.Sk - 1});
    v.push_back({"S = Q·K with K read untransposed (K's [Sk, D] rows taken as [D, Sk])", m, 0, -1, true});
    v.push_back({"softmax taken over the queries (each column of scores) instead of over the keys", m, 0, -1, false, true});
    return v;
}

// Where the failing elements are, against the right answer.
std::string locate(const Tensor& got, const std::vector<double>& want, const AttentionSizes& s, int64_t heads, Tolerance tol) {
    std::set<int64_t> rows, hs, dims;
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < s.Sq; ++i)
            for (int64_t d = 0; d < s.D; ++d) {
                const size_t e = size_t((h * s.Sq + i) * s.D + d);
                const double g = got.ptr()[e], c = want[e];
                if (!within(g, c, tol)) rows.insert(i), hs.insert(h), dims.insert(d);
            }
    if (rows.empty()) return heads < s.BH ? "" : "every element is within the tolerance here (the failure is elsewhere)";
    int64_t nonfinite = 0;
    for (int64_t e = 0; e < heads * s.Sq * s.D; ++e) nonfinite += !std::isfinite(got.ptr()[e]);
    std::vector<std::string> where;
    const std::string r = failing_only(rows, s.Sq, "query rows"), h = failing_only(hs, heads, "heads", false),
                      d = failing_only(dims, s.D, "head dimensions", false);
    where.push_back(r.empty() ? "every query row" : r);
    where.push_back(h.empty() ? "every head" : h);
    if (!d.empty()) where.push_back(d);
    std::string what = "no common mistake matches";
    if (nonfinite > 0)
        what += fmt::format("; {} output{} NaN or Inf (never written, read past the end, or exp overflowing without the "
                            "max subtracted?)", nonfinite, nonfinite == 1 ? " is" : "s are");
    else if (const double w = worst(got, 0, want, 0, heads, s, tol); w <= 10)
        what += fmt::format("; every element is within {:.2g}× the tolerance: a loss of precision (float accumulation in a "
                            "long sum, a fast exp, a value rounded to a narrower type) rather than a wrong formula", w);
    return fmt::format("{}; the failing elements are in {}", what, fmt::join(where, ", "));
}

}  // namespace

AttentionSizes attention_sizes(const Tensor& q, const Tensor& k) {
    const int64_t Sq = q.shape[q.shape.size() - 2], D = q.shape.back();
    return {q.size() / (Sq * D), Sq, k.shape[k.shape.size() - 2], D};
}

std::string failing_only(const std::set<int64_t>& failing, int64_t n, const std::string& noun, bool tiles) {
    if (failing.empty() || int64_t(failing.size()) == n) return "";
    const int64_t first = *failing.begin(), last = *failing.rbegin();
    const std::string span = first == last ? fmt::format("{}", first) : fmt::format("{}…{}", first, last);
    if (last - first + 1 != int64_t(failing.size()))
        return fmt::format("{} of the {} {}, between {}", failing.size(), n, noun, span);
    std::string tile;
    for (int64_t t : {16, 32, 64, 128, 256})
        if (tiles && n % t != 0 && n > t && first >= n / t * t) {
            tile = fmt::format(": the last partial tile of {}", t);
            break;
        }
    return fmt::format("{} {} only (of 0…{}){}", noun, span, n - 1, tile);
}

std::string diagnose_attention(const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                               Tolerance tol, std::vector<std::pair<int64_t, int64_t>> tiles) {
    const AttentionSizes s = attention_sizes(q, k);
    if (s.Sq == 0 || s.Sk == 0 || got.size() != q.size()) return "";
    // at most ~5·10⁷ multiply-adds a variant (a failing case costs about a second): the first heads, as many as fit
    // (said in the diagnosis)
    const int64_t per_head = s.Sq * s.Sk * s.D * 2, heads = std::clamp<int64_t>(50000000 / std::max<int64_t>(per_head, 1), 0, s.BH);
    if (heads == 0) return "";
    // An output of zeros (or one value everywhere) is named so by the comparison; a mistake whose answer is also all
    // zeros at this size (every key dropped: no whole tile fits) would only hide that.
    if (is_constant(got.ptr(), got.size())) return "";
    const std::string on = heads < s.BH ? fmt::format(" (tried on the first {} of {} heads)", heads, s.BH) : "";
    const std::vector<double> right = run_variant({"attention"}, q, k, v, s, heads);
    std::vector<std::string> matches;  // every variant the output matches: at small sizes two may coincide
    double best = INFINITY;
    if (tiles.empty()) tiles = {{16, 16}, {32, 32}, {64, 64}, {128, 128}, {64, 32}, {128, 64}};  // the usual (Br, Bc)
    for (const Variant& var : variants(s, causal, tiles)) {
        const std::vector<double> answer = run_variant(var, q, k, v, s, heads);
        if (std::all_of(answer.begin(), answer.end(), [](double x) { return x == 0.0; })) continue;  // says nothing here
        const double err = worst(got, 0, answer, 0, heads, s, tol);
        if (err <= 1.0) matches.push_back(var.what), best = std::min(best, err);
    }
    if (!matches.empty())
        return fmt::format("diagnosis: the output is {} — every element within the tolerance of that answer (its largest "
                           "error {:.2g} of it){}{}", matches[0], best,
                           matches.size() > 1 ? fmt::format("; it equally matches: {}", fmt::join(matches.begin() + 1, matches.end(), "; ")) : "",
                           on);
    // heads or batches mixed up: every output head equal to another head's right answer
    if (heads > 1 && heads <= 64) {
        std::vector<std::string> moved;
        bool all = true;
        for (int64_t h = 0; h < heads && all; ++h) {
            int64_t match = -1;
            for (int64_t w = 0; w < heads && match < 0; ++w)
                if (worst(got, h, right, w, 1, s, tol) <= 1.0) match = w;
            all = match >= 0;
            if (match >= 0 && match != h && moved.size() < 4) moved.push_back(fmt::format("head {} holds head {}'s", h, match));
        }
        if (all && !moved.empty())
            return fmt::format("diagnosis: every output head is the right answer of some head, but not its own ({} answer): "
                               "the (batch, head) index is wrong{}", fmt::join(moved, ", "), on);
    }
    const std::string where = locate(got, right, s, heads, tol);
    return where.empty() ? "" : "diagnosis: " + where + on;
}

std::string diagnose_attention_bse(const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v, int H, bool causal,
                                   Tolerance tol) {
    return diagnose_attention(to_heads(got, H), to_heads(q, H), to_heads(k, H), to_heads(v, H), causal, tol);
}

}  // namespace attn
