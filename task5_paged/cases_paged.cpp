// cases_paged.cpp — Task 5's paged part (5b), graded on the GPU. Each case lays a batch of sequences out in a pool
// of pages the way a server would — pages handed out in shuffled order, a spare page or two, table entries past a
// sequence's last page holding −1 or a number far outside the pool, two sequences sharing their prompt's pages —
// and leaves every slot that holds no position NaN (0xFFFF), so a read of the wrong slot shows. It then appends
// each sequence's newest token and decodes, and checks three things: the pools hold exactly the appended tokens
// and nothing else changed (bit for bit), the inputs are unchanged, and o is within tolerance of float64
// attention computed here from each sequence's positions as a list (not through the page table), with the
// bf16-rounded inputs. Tolerance: 4b's for a bf16 output (task4_bf16/README.md) taken relative to what the output
// averages, |got − want| ≤ 4e-3 + 1.6e-2·Σ_j p_j|v_j| (o_within), and relative L2 ≤ 4e-3 per sequence, times peak² for
// the peaky fresh draws (common/compare.h).
#include "task5_paged/cases_paged.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "common/check.h"
#include "common/cuda/bf16_tensor.h"
#include "common/cuda/gpu_case.h"
#include "common/seed.h"
#include "task5_paged/task5_paged.h"

namespace task5 {
namespace {

using namespace attn;
const Tolerance kTol{4e-3, 1.6e-2};
constexpr double kRelL2 = 4e-3;
constexpr uint16_t kNaN = 0xFFFF;  // a bf16 NaN: what every slot that holds no position contains

struct Spec {
    int H_q, H_kv, D, page_size;
    std::vector<int> lengths;
    int shared_pages = 0;  // sequence 1 begins with sequence 0's first pages (a common prompt)
    float peak = 1.0f;
};

// A batch laid out in a pool. k, v: each sequence's positions as a list, [length, H_kv, D], bf16-exact; the last
// position is the token the case appends.
struct Batch {
    Spec s;
    int B = 0, num_pages = 0, pages_per_seq = 0;
    std::vector<int> table;
    std::vector<Tensor> k, v;
    Tensor q, k_new, v_new;
    std::vector<uint16_t> k_before, v_before, k_after, v_after;  // the pools' bits before and after the append
    std::vector<int> owner;  // for each page: the sequence that first holds it (−1: spare)
    size_t row_of(int page, int slot, int h) const { return ((size_t(page) * s.page_size + slot) * s.H_kv + h) * s.D; }
};

Tensor bf16_random(std::mt19937_64& g, const Shape& shape, float scale = 1.0f) {
    Tensor t = random_tensor(g, shape, scale);
    round_to_bf16(t);
    return t;
}

Batch lay_out(std::mt19937_64& g, const Spec& s) {
    Batch b;
    b.s = s;
    b.B = int(s.lengths.size());
    const int ps = s.page_size, sp = s.shared_pages;
    std::vector<int> used(b.B);
    int needed = 0;
    for (int i = 0; i < b.B; ++i) used[i] = (s.lengths[i] + ps - 1) / ps, needed += used[i];
    if (sp > 0 && (b.B < 2 || s.lengths[0] - 1 < sp * ps || s.lengths[1] - 1 < sp * ps))
        throw std::logic_error("a shared prompt must leave both sequences' newest positions outside it");
    needed -= sp;
    b.num_pages = needed + 3;  // spare pages: never referenced, NaN throughout
    b.pages_per_seq = *std::max_element(used.begin(), used.end()) + 1;
    std::vector<int> perm(b.num_pages);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    b.table.assign(size_t(b.B) * b.pages_per_seq, 0);
    b.owner.assign(b.num_pages, -1);
    int next = 0;
    for (int i = 0; i < b.B; ++i)
        for (int p = 0; p < b.pages_per_seq; ++p) {
            int& e = b.table[size_t(i) * b.pages_per_seq + p];
            if (p >= used[i]) e = (p % 3 == 0) ? -1 : (p % 3 == 1) ? INT_MAX - p : -2;  // unused: never to be followed
            else if (i == 1 && p < sp) e = b.table[p];          // the prompt's pages, shared with sequence 0
            else e = perm[next++], b.owner[e] = i;
        }
    // Every third unused entry (−2 above) names a page another sequence owns: its slots hold finite keys, so a kernel that
    // takes a row's entries past its length, or skips NaN slots instead of reading lengths, gets a wrong answer.
    for (int i = 0; i < b.B; ++i)
        for (int p = used[i]; p < b.pages_per_seq; ++p) {
            int& e = b.table[size_t(i) * b.pages_per_seq + p];
            if (e != -2) continue;
            e = -1;
            for (int j = 1; j < b.B && e < 0; ++j) e = b.table[size_t((i + j) % b.B) * b.pages_per_seq];
        }
    for (int i = 0; i < b.B; ++i) {
        b.k.push_back(bf16_random(g, {s.lengths[i], s.H_kv, s.D}, s.peak));
        b.v.push_back(bf16_random(g, {s.lengths[i], s.H_kv, s.D}));
    }
    const size_t row = size_t(s.H_kv) * s.D;
    if (sp > 0)  // the shared prompt's positions hold the same K and V in both sequences
        for (auto [from, to] : {std::pair{&b.k[0], &b.k[1]}, std::pair{&b.v[0], &b.v[1]}})
            std::copy_n(from->data.begin(), size_t(sp) * ps * row, to->data.begin());
    b.q = bf16_random(g, {b.B, s.H_q, s.D}, s.peak);
    b.k_new = Tensor({b.B, s.H_kv, s.D}), b.v_new = Tensor({b.B, s.H_kv, s.D});
    const size_t pool = size_t(b.num_pages) * ps * row;
    b.k_before.assign(pool, kNaN), b.v_before.assign(pool, kNaN);
    b.k_after = b.k_before, b.v_after = b.v_before;
    for (int i = 0; i < b.B; ++i) {
        const int L = s.lengths[i];
        for (int pos = 0; pos < L; ++pos) {
            const int page = b.table[size_t(i) * b.pages_per_seq + pos / ps];
            const size_t at = b.row_of(page, pos % ps, 0), from = size_t(pos) * row;
            for (size_t e = 0; e < row; ++e) {
                const uint16_t kb = bf16_bits(b.k[i].data[from + e]), vb = bf16_bits(b.v[i].data[from + e]);
                b.k_after[at + e] = kb, b.v_after[at + e] = vb;
                if (pos < L - 1) b.k_before[at + e] = kb, b.v_before[at + e] = vb;
            }
        }
        std::copy_n(b.k[i].data.begin() + long(size_t(L - 1) * row), row, b.k_new.data.begin() + long(size_t(i) * row));
        std::copy_n(b.v[i].data.begin() + long(size_t(L - 1) * row), row, b.v_new.data.begin() + long(size_t(i) * row));
    }
    return b;
}

// float64 attention of query head h of sequence i over its positions as a list, with KV head kvh. `magnitude` (if
// given) gets Σ_j p_j·|v_j| per element: the size of what the output averages, which its rounding errors follow.
std::vector<double> attend(const Batch& b, int i, int h, int kvh, std::vector<double>* magnitude = nullptr) {
    const Spec& s = b.s;
    const int D = s.D, L = s.lengths[i];
    const float* q = b.q.ptr() + (size_t(i) * s.H_q + h) * D;
    std::vector<double> p(L), o(D, 0.0), m(D, 0.0);
    double mx = -INFINITY, sum = 0;
    for (int pos = 0; pos < L; ++pos) {
        const float* k = b.k[i].ptr() + (size_t(pos) * s.H_kv + kvh) * D;
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += double(q[d]) * k[d];
        p[pos] = dot / std::sqrt(double(D)), mx = std::max(mx, p[pos]);
    }
    for (int pos = 0; pos < L; ++pos) {
        const double w = std::exp(p[pos] - mx);
        sum += w;
        const float* v = b.v[i].ptr() + (size_t(pos) * s.H_kv + kvh) * D;
        for (int d = 0; d < D; ++d) o[d] += w * v[d], m[d] += w * std::abs(v[d]);
    }
    for (double& x : o) x /= sum;
    if (magnitude) {
        for (double& x : m) x /= sum;
        *magnitude = std::move(m);
    }
    return o;
}

// The expected o [B, H_q, D] (query head h on KV head h / g) and each element's magnitude Σ_j p_j·|v_j|.
std::pair<Tensor, Tensor> attention_f64(const Batch& b) {
    const Spec& s = b.s;
    Tensor out({b.B, s.H_q, s.D}), mag({b.B, s.H_q, s.D});
    for (int i = 0; i < b.B; ++i)
        for (int h = 0; h < s.H_q; ++h) {
            std::vector<double> m;
            const std::vector<double> o = attend(b, i, h, h / (s.H_q / s.H_kv), &m);
            std::copy(o.begin(), o.end(), out.data.begin() + long((size_t(i) * s.H_q + h) * s.D));
            std::copy(m.begin(), m.end(), mag.data.begin() + long((size_t(i) * s.H_q + h) * s.D));
        }
    return {out, mag};
}

// |got − want| ≤ atol + rtol·m for every element, m = Σ_j p_j·|v_j| (≥ |want|). The kernels round the probabilities
// to bf16 for the tensor cores; that errs in proportion to m, and o may cancel to almost nothing (a short sequence
// whose values are opposite), where a bound on |want| alone asks for more than bf16 holds: the reference once
// missed it by a hair on an H100 at one fresh seed (docs/perf.md, "5b's tolerance"). Records the largest error.
bool o_within(CaseResult& r, const Tensor& got, const Tensor& want, const Tensor& mag, Tolerance tol) {
    size_t outside = 0, nonfinite = 0, first = got.data.size();
    double worst = 0, worst_share = 0;
    for (size_t e = 0; e < got.data.size(); ++e) {
        const double err = std::abs(double(got.data[e]) - double(want.data[e])), bound = tol.atol + tol.rtol * mag.data[e];
        if (!std::isfinite(got.data[e])) {
            ++nonfinite, first = std::min(first, e);
            continue;
        }
        worst = std::max(worst, err), worst_share = std::max(worst_share, err / bound);
        if (err > bound) ++outside, first = std::min(first, e);
    }
    r.max_abs_err = std::max(r.max_abs_err, worst), r.tol_share = std::max(r.tol_share, worst_share);
    if (outside == 0 && nonfinite == 0) return true;
    const size_t D = size_t(got.shape[2]), H = size_t(got.shape[1]);
    r.status = "failed", r.nonfinite_output = nonfinite > 0;
    r.reason = fmt::format("o: {} of {} elements outside atol={:g} + rtol={:g}·Σp|v| (the attention-weighted size of the values){}; "
                           "max abs err {:.3g}, {:.1f}x the tolerance; first at [b={},h={},d={}]",
                           outside + nonfinite, got.data.size(), tol.atol, tol.rtol,
                           nonfinite ? fmt::format(", {} of them NaN/Inf", nonfinite) : "", worst, worst_share,
                           first / (H * D), first / D % H, first % D);
    return false;
}

Bf16Buffer from_bits(const std::vector<uint16_t>& bits) {
    Bf16Buffer d(bits.size());
    std::vector<float> w(d.words.size(), 0.0f);
    std::memcpy(w.data(), bits.data(), bits.size() * sizeof(uint16_t));
    d.words.upload(w);
    return d;
}

std::vector<uint16_t> bits_of(const Bf16Buffer& d) {
    const std::vector<float> w = d.words.download();
    std::vector<uint16_t> bits(d.n);
    std::memcpy(bits.data(), w.data(), d.n * sizeof(uint16_t));
    return bits;
}

// The pool `name` holds exactly `want`; else the first wrong element, said as the page, slot and KV head it is, and
// what that slot should hold.
bool pool_is(CaseResult& r, const std::string& name, const Batch& b, const std::vector<uint16_t>& got,
             const std::vector<uint16_t>& want, const std::vector<uint16_t>& before) {
    const size_t row = size_t(b.s.H_kv) * b.s.D, page_elems = row * b.s.page_size;
    for (size_t e = 0; e < got.size(); ++e) {
        if (got[e] == want[e]) continue;
        const int page = int(e / page_elems), slot = int(e % page_elems / row), h = int(e % row / b.s.D);
        const bool appended = want[e] != before[e];
        r.status = "failed";
        r.reason = appended ? fmt::format("{}: page {} slot {} (KV head {}) should hold the appended token of sequence {}, "
                                          "and does not",
                                          name, page, slot, h, b.owner[page])
                            : fmt::format("{}: page {} slot {} (KV head {}) was written, and no appended token belongs there "
                                          "({}); an append writes only position lengths[b] − 1 of each sequence",
                                          name, page, slot, h,
                                          b.owner[page] < 0 ? "a spare page no sequence uses"
                                                            : fmt::format("a page of sequence {}", b.owner[page]));
        return false;
    }
    return true;
}

bool head_within(const Batch& b, const float* got, int i, int h, int kvh, Tolerance tol) {
    std::vector<double> m;
    const std::vector<double> want = attend(b, i, h, kvh, &m);
    for (size_t d = 0; d < want.size(); ++d)
        if (!(std::abs(got[d] - want[d]) <= tol.atol + tol.rtol * m[d])) return false;
    return true;
}

// What a wrong o most likely comes from: NaN (a slot past a length, or a page no sequence owns, was read); a query
// head that matches another KV head's attention (the group mapping); else which sequences are wrong.
std::string diagnose(const Tensor& got, const Batch& b, Tolerance tol) {
    for (float x : got.data)
        if (std::isnan(x))
            return "o holds NaN: every slot of the pool that holds no position is NaN, so a read past a sequence's "
                   "length, of a table entry past its last page, or of the wrong page shows this way";
    const Spec& s = b.s;
    const int g = s.H_q / s.H_kv;
    std::vector<int> wrong;
    for (int i = 0; i < b.B; ++i) {
        bool ok = true;
        for (int h = 0; h < s.H_q && ok; ++h) {
            const float* o = got.ptr() + (size_t(i) * s.H_q + h) * s.D;
            if (head_within(b, o, i, h, h / g, tol)) continue;
            ok = false;
            for (int j = 0; j < s.H_kv; ++j)
                if (j != h / g && head_within(b, o, i, h, j, tol))
                    return fmt::format("query head {} of sequence {} equals attention with KV head {}: with g = {} query "
                                       "heads a KV head it should use KV head h / g = {}",
                                       h, i, j, g, h / g);
        }
        if (!ok) wrong.push_back(i);
    }
    if (wrong.empty()) return "";
    std::string list;
    for (size_t w = 0; w < wrong.size() && w < 8; ++w)
        list += fmt::format("{}{} (length {})", w ? ", " : "", wrong[w], s.lengths[size_t(wrong[w])]);
    return fmt::format("wrong in {} of {} sequences: {}{} — each sequence's positions are where its own page table row "
                       "says, page_table[b][pos / page_size], slot pos mod page_size",
                       wrong.size(), b.B, list, wrong.size() > 8 ? ", …" : "");
}

std::string label(const Batch& b) {
    const Spec& s = b.s;
    std::string lens;
    for (size_t i = 0; i < s.lengths.size() && i < 6; ++i) lens += (i ? "," : "") + std::to_string(s.lengths[i]);
    if (s.lengths.size() > 6) lens += ",…";
    return fmt::format("B={} H_q={} H_kv={} D={} page {} lengths {}{}{}", b.B, s.H_q, s.H_kv, s.D, s.page_size, lens,
                       s.shared_pages ? fmt::format(" ({} shared pages)", s.shared_pages) : "", peak_note(s.peak));
}

// The host tables a call was handed (the runner hands host buffers back) are still the batch's: they are inputs.
bool tables_are(CaseResult& r, const char* call, const Batch& b, const std::vector<int>& table, const std::vector<int>& lengths) {
    if (table == b.table && lengths == b.s.lengths) return true;
    r.reason = fmt::format("{} modified {} (the tables are inputs, read-only)", call, table != b.table ? "page_table" : "lengths");
    return false;
}

// o against float64 attention: every element within `tol` (o_within), then each sequence's relative L2 error within
// `rel_l2` — per sequence, as over the whole batch a short sequence's large o would hide a long one's lost tail.
bool o_is_attention(CaseResult& r, const Batch& b, const Tensor& got, Tolerance tol, double rel_l2) {
    const Spec& s = b.s;
    const auto [want, magnitude] = attention_f64(b);
    if (!o_within(r, got, want, magnitude, tol)) {
        add_diagnosis(r, diagnose(got, b, tol));
        return false;
    }
    const size_t per = size_t(s.H_q) * s.D;
    for (int i = 0; i < b.B; ++i) {
        Tensor gi({s.H_q, s.D}), wi({s.H_q, s.D});
        std::copy_n(got.data.begin() + long(i * per), per, gi.data.begin());
        std::copy_n(want.data.begin() + long(i * per), per, wi.data.begin());
        if (!relative_l2_within(r, fmt::format("o of sequence {} (length {})", i, s.lengths[size_t(i)]), gi, wi, rel_l2,
                                "a piece of a split sequence lost, or a sum kept in bf16?"))
            return false;
    }
    return true;
}

CaseResult run_batch(const Batch& b) {
    const Spec& s = b.s;
    CaseResult r;
    r.shape = label(b);
    Bf16Buffer kp = from_bits(b.k_before), vp = from_bits(b.v_before);
    Bf16Buffer q(b.q.data.size()), kn(b.k_new.data.size()), vn(b.v_new.data.size()), o(b.q.data.size());
    q.upload(b.q), kn.upload(b.k_new), vn.upload(b.v_new), o.poison();
    std::vector<int> table = b.table, lengths = s.lengths;  // the runner hands host buffers back: checked unchanged
    auto tables_unchanged = [&](const char* call) { return tables_are(r, call, b, table, lengths); };
    // The append alone: its slots hold the new tokens and nothing else changed; then the decode: the pools unchanged.
    r.ms = wall_ms([&] {
        paged_append_bf16(kp.get(), vp.get(), kn.get(), vn.get(), table.data(), lengths.data(), b.B, s.H_kv, s.D, s.page_size,
                          b.num_pages, b.pages_per_seq);
        sync_default_stream();
    });
    if (!tables_unchanged("paged_append_bf16") || !bf16_input_unchanged(r, "k_new", b.k_new, kn) ||
        !bf16_input_unchanged(r, "v_new", b.v_new, vn) || !pool_is(r, "k_pages", b, bits_of(kp), b.k_after, b.k_before) ||
        !pool_is(r, "v_pages", b, bits_of(vp), b.v_after, b.v_before))
        return r;
    r.ms += wall_ms([&] {
        paged_decode_bf16(q.get(), kp.get(), vp.get(), o.get(), table.data(), lengths.data(), b.B, s.H_q, s.H_kv, s.D,
                          s.page_size, b.num_pages, b.pages_per_seq);
        sync_default_stream();
    });
    if (!tables_unchanged("paged_decode_bf16") || !bf16_input_unchanged(r, "q", b.q, q) ||
        !pool_is(r, "k_pages (after the decode, which may not write it)", b, bits_of(kp), b.k_after, b.k_after) ||
        !pool_is(r, "v_pages (after the decode, which may not write it)", b, bits_of(vp), b.v_after, b.v_after))
        return r;
    if (o_is_attention(r, b, o.download(b.q.shape), scaled_for_peak(kTol, b.s.peak), kRelL2 * b.s.peak * b.s.peak)) r.status = "passed";
    return r;
}

// ---- float32 pools (task5b.3, task5b.4) ----
// The same batches with float32 pools: every slot that holds no position NaN, the positions' values the batch's
// (bf16-exact, so that the pools are checked bit for bit as above), o against the same float64 attention within Task
// 5's tolerance, which a kernel that rounds anything to bf16 misses by far (its probabilities alone err by 2⁻⁹).
const Tolerance kTolF32{2e-5, 1e-4};  // task5/cases.cpp
constexpr double kRelL2F32 = 1e-4;

std::vector<float> floats_of(const std::vector<uint16_t>& bits) {
    std::vector<float> f(bits.size());
    for (size_t e = 0; e < bits.size(); ++e) f[e] = bits[e] == kNaN ? std::numeric_limits<float>::quiet_NaN() : bf16_value(bits[e]);
    return f;
}

// A float32 pool as the bf16 bits it should hold: a value that is no bf16 (its low half set) becomes 0x7FC1, a pattern
// no pool holds, so that it shows as a wrong slot; any NaN is the pool's NaN.
std::vector<uint16_t> bits_of_floats(const std::vector<float>& f) {
    std::vector<uint16_t> bits(f.size());
    for (size_t e = 0; e < f.size(); ++e) {
        uint32_t w;
        std::memcpy(&w, &f[e], sizeof w);
        bits[e] = std::isnan(f[e]) ? kNaN : (w & 0xFFFFu) ? uint16_t(0x7FC1) : uint16_t(w >> 16);
    }
    return bits;
}

CaseResult run_batch_f32(const Batch& b) {
    const Spec& s = b.s;
    CaseResult r;
    r.shape = label(b) + ", float32";
    DeviceBuffer<float> kp(b.k_before.size()), vp(b.v_before.size()), o(b.q.data.size());
    kp.upload(floats_of(b.k_before)), vp.upload(floats_of(b.v_before)), o.poison();
    auto q = to_device(b.q), kn = to_device(b.k_new), vn = to_device(b.v_new);
    std::vector<int> table = b.table, lengths = s.lengths;
    auto tables_unchanged = [&](const char* call) { return tables_are(r, call, b, table, lengths); };
    r.ms = wall_ms([&] {
        paged_append_f32(kp.get(), vp.get(), kn.get(), vn.get(), table.data(), lengths.data(), b.B, s.H_kv, s.D, s.page_size,
                         b.num_pages, b.pages_per_seq);
        sync_default_stream();
    });
    if (!tables_unchanged("paged_append_f32") || !device_input_unchanged(r, "k_new", b.k_new, kn) ||
        !device_input_unchanged(r, "v_new", b.v_new, vn) ||
        !pool_is(r, "k_pages", b, bits_of_floats(kp.download()), b.k_after, b.k_before) ||
        !pool_is(r, "v_pages", b, bits_of_floats(vp.download()), b.v_after, b.v_before))
        return r;
    r.ms += wall_ms([&] {
        paged_decode_f32(q.get(), kp.get(), vp.get(), o.get(), table.data(), lengths.data(), b.B, s.H_q, s.H_kv, s.D, s.page_size,
                         b.num_pages, b.pages_per_seq);
        sync_default_stream();
    });
    if (!tables_unchanged("paged_decode_f32") || !device_input_unchanged(r, "q", b.q, q) ||
        !pool_is(r, "k_pages (after the decode, which may not write it)", b, bits_of_floats(kp.download()), b.k_after, b.k_after) ||
        !pool_is(r, "v_pages (after the decode, which may not write it)", b, bits_of_floats(vp.download()), b.v_after, b.v_after))
        return r;
    if (o_is_attention(r, b, to_host(o, b.q.shape), scaled_for_peak(kTolF32, s.peak), kRelL2F32 * s.peak * s.peak)) r.status = "passed";
    return r;
}

CaseResult batch_case(const std::string& name, const Spec& s) {
    auto g = rng_for("task5b." + name);
    return run_batch(lay_out(g, s));
}

CaseResult fresh_case(int draw) {
    auto g = rng_for("task5b.fresh." + std::to_string(draw));
    const int H_kv = pick(g, std::vector<int>{1, 2, 4}), group = pick(g, std::vector<int>{1, 4, 8});
    Spec s{H_kv * group, H_kv, pick(g, std::vector<int>{64, 128}), pick(g, std::vector<int>{1, 16, 32, 64, 128}), {}};
    const int B = uniform_int(g, 1, 6);
    for (int i = 0; i < B; ++i) s.lengths.push_back(uniform_int(g, 1, 3000));
    if (B >= 2 && std::min(s.lengths[0], s.lengths[1]) > s.page_size + 1)
        s.shared_pages = uniform_int(g, 1, (std::min(s.lengths[0], s.lengths[1]) - 1) / s.page_size);
    s.peak = peak_scale(g, draw);
    Batch b = lay_out(g, s);
    CaseResult r = run_batch(b);
    r.shape += fmt::format(" (seed {})", grader_seed());
    return r;
}

// A rejected call: it throws E naming `names`.
template <class E>
CaseResult rejects(const std::string& what, const std::vector<std::string>& names, Spec s, bool append,
                   void (*spoil)(Batch&, Spec&)) {
    auto g = rng_for("task5b.errors");
    Batch b = lay_out(g, s);
    spoil(b, s);
    CaseResult r;
    r.shape = what;
    // Buffers of the sizes the spoiled arguments say (the proxy moves that many elements), the batch's data where
    // they still fit it.
    const size_t pool = size_t(b.num_pages) * s.page_size * s.H_kv * s.D, nq = size_t(b.B) * s.H_q * s.D,
                 nkv = size_t(b.B) * s.H_kv * s.D;
    const bool same = pool == b.k_before.size();
    Bf16Buffer kp = same ? from_bits(b.k_before) : Bf16Buffer(pool), vp = same ? from_bits(b.v_before) : Bf16Buffer(pool);
    Bf16Buffer q(nq), kn(nkv), vn(nkv), o(nq);
    if (!same) kp.poison(), vp.poison();
    if (nq == b.q.data.size()) q.upload(b.q);
    if (nkv == b.k_new.data.size()) kn.upload(b.k_new), vn.upload(b.v_new);
    expect_throw<E>(
        r,
        [&] {
            if (append)
                paged_append_bf16(kp.get(), vp.get(), kn.get(), vn.get(), b.table.data(), s.lengths.data(), b.B, s.H_kv, s.D,
                                  s.page_size, b.num_pages, b.pages_per_seq);
            else
                paged_decode_bf16(q.get(), kp.get(), vp.get(), o.get(), b.table.data(), s.lengths.data(), b.B, s.H_q, s.H_kv,
                                  s.D, s.page_size, b.num_pages, b.pages_per_seq);
            sync_default_stream();
        },
        names, fmt::format("{} accepted {} (must throw {})", append ? "paged_append_bf16" : "paged_decode_bf16", what,
                           std::is_same_v<E, std::out_of_range> ? "std::out_of_range" : "std::invalid_argument"));
    // (What a rejected call wrote before it threw never reaches this side: the runner answers an error without buffers.)
    return r;
}

const Spec kSmall{8, 2, 64, 16, {40, 17, 33}};

// The float32 calls reject a page outside the pool as the bf16 ones do (sequence 1's last page: the append checks it too).
CaseResult rejects_f32(bool append) {
    auto g = rng_for("task5b.errors");
    Batch b = lay_out(g, kSmall);
    const Spec& s = b.s;
    b.table[size_t(b.pages_per_seq) + 1] = b.num_pages;
    CaseResult r;
    r.shape = "page_table[1][1] = num_pages, float32";
    DeviceBuffer<float> kp(b.k_before.size()), vp(b.v_before.size()), q(b.q.data.size()), o(b.q.data.size()), kn(b.k_new.data.size()),
        vn(b.v_new.data.size());
    kp.upload(floats_of(b.k_before)), vp.upload(floats_of(b.v_before)), q.upload(b.q.data), kn.upload(b.k_new.data), vn.upload(b.v_new.data);
    const char* fn = append ? "paged_append_f32" : "paged_decode_f32";
    expect_throw<std::out_of_range>(
        r,
        [&] {
            if (append)
                paged_append_f32(kp.get(), vp.get(), kn.get(), vn.get(), b.table.data(), s.lengths.data(), b.B, s.H_kv, s.D, s.page_size,
                                 b.num_pages, b.pages_per_seq);
            else
                paged_decode_f32(q.get(), kp.get(), vp.get(), o.get(), b.table.data(), s.lengths.data(), b.B, s.H_q, s.H_kv, s.D,
                                 s.page_size, b.num_pages, b.pages_per_seq);
            sync_default_stream();
        },
        {"page_table[1][1]"}, fmt::format("{} accepted a page outside the pool (must throw std::out_of_range)", fn));
    return r;
}

}  // namespace

std::vector<GradeCase> paged_grade_cases() {
    std::vector<GradeCase> cases;
    auto add = [&](const std::string& name, double w, const std::string& suite, Spec s) {
        cases.push_back({name, w, [name, s] { return batch_case(name, s); }, suite});
    };
    add("MHA, lengths 1, 127, 129", 1.0, "layout", {4, 4, 128, 16, {1, 127, 129}});
    add("GQA g=4, ragged batch", 1.0, "gqa", {16, 4, 128, 32, {1, 17, 300, 1000, 64}});
    add("GQA g=8, D=64", 1.0, "gqa", {32, 4, 64, 64, {64, 65, 2000}});
    add("MQA: 32 query heads on one KV head", 1.0, "gqa", {32, 1, 128, 128, {129, 4096}});
    add("MQA at D=64 over pages of 16, lengths 1 … 3000", 0.5, "gqa", {32, 1, 64, 16, {1, 127, 129, 3000}});
    add("a group of 24 query heads (a second row tile part-filled)", 0.5, "gqa", {48, 2, 128, 32, {200, 1, 5000}});
    add("token pages (page_size 1)", 1.0, "layout", {8, 2, 128, 1, {5, 300, 2}});
    add("pages of 256 positions", 0.5, "layout", {8, 8, 64, 256, {255, 256, 257, 1}});
    add("shared prompt pages", 1.0, "layout", {16, 2, 128, 16, {600, 530, 90}, 30});
    // 40 sequences of up to 400 one-position pages: a table of 16,000 entries (a kernel that passes its tables in the
    // launch's parameters, 32 KB at most, must take them another way here)
    add("a table of 16,000 entries (40 sequences, pages of 1)", 0.5, "layout", {8, 2, 64, 1, [] {
            std::vector<int> lengths(40);
            for (int i = 0; i < 40; ++i) lengths[i] = 400 - 7 * i;
            return lengths;
        }()});
    add("long: lengths 1 … 32768 in one batch", 2.0, "long", {8, 2, 128, 64, {1, 700, 9000, 32768}});
    // Pieces of many tiles over pages smaller than a tile: the loads of a pipeline's steady state on the page-by-page
    // path, which short pieces never reach (the reference's four-stage D = 64 decode once faulted there only:
    // docs/perf.md, "An illegal instruction in 5b's four-stage decode").
    add("long at D=64 over pages of 16: lengths 5 … 32768", 0.5, "long", {8, 2, 64, 16, {32768, 5, 20000, 32768}});
    add("B·H_kv = 66000 (past gridDim.y's 65535)", 0.5, "long", {1000, 1000, 64, 1, std::vector<int>(66, 2)});
    for (int draw = 0; draw < 4; ++draw)
        cases.push_back({fmt::format("fresh inputs #{}", draw + 1), 1.0, [draw] { return fresh_case(draw); }, "fresh"});
    // float32 pools (task5b.3, task5b.4)
    auto add_f32 = [&](const std::string& name, double w, Spec s) {
        cases.push_back({"float32: " + name, w, [name, s] {
                             auto g = rng_for("task5b.f32." + name);
                             return run_batch_f32(lay_out(g, s));
                         }, "f32"});
    };
    add_f32("MHA, lengths 1, 127, 129", 0.5, {4, 4, 128, 16, {1, 127, 129}});
    add_f32("GQA g=8, D=64, ragged", 0.5, {32, 4, 64, 32, {1, 64, 65, 2000}});
    add_f32("MQA, shared prompt pages", 0.5, {32, 1, 128, 16, {600, 530, 90}, 30});
    add_f32("long: lengths 1 … 32768", 0.5, {8, 2, 128, 64, {1, 700, 9000, 32768}});
    add_f32("peaky inputs (q and k ×3), page_size 1", 0.5, {16, 2, 128, 1, {3, 250, 77}, 0, 3.0f});
    add_f32("B·H_kv = 66000 (past gridDim.y's 65535)", 0.25, {1000, 1000, 64, 1, std::vector<int>(66, 2)});

    auto err = [&](const std::string& name, auto run) { cases.push_back({name, 0.25, run, "errors"}); };
    err("rejects H_q = 6 over H_kv = 4", [] {
        return rejects<std::invalid_argument>("H_q = 6, H_kv = 4", {"6", "4"}, {8, 4, 64, 16, {40, 17}}, false,
                                              [](Batch&, Spec& s) { s.H_q = 6; });
    });
    err("rejects head_dim 96", [] {
        return rejects<std::invalid_argument>("D = 96", {"96"}, kSmall, false, [](Batch&, Spec& s) { s.D = 96; });
    });
    err("rejects page_size 48", [] {
        return rejects<std::invalid_argument>("page_size = 48", {"48"}, kSmall, false, [](Batch&, Spec& s) { s.page_size = 48; });
    });
    err("decode rejects a page outside the pool", [] {
        return rejects<std::out_of_range>("page_table[1][1] = num_pages", {"page_table[1][1]"}, kSmall, false,
                                          [](Batch& b, Spec&) { b.table[size_t(b.pages_per_seq) + 1] = b.num_pages; });
    });
    err("append rejects a page outside the pool", [] {
        return rejects<std::out_of_range>("page_table[2][2] = −5", {"page_table[2][2]", "-5"}, kSmall, true,
                                          [](Batch& b, Spec&) { b.table[size_t(b.pages_per_seq) * 2 + 2] = -5; });
    });
    err("rejects a length past its table", [] {
        return rejects<std::out_of_range>("lengths[0] past pages_per_seq · page_size", {"lengths[0]"}, kSmall, false,
                                          [](Batch& b, Spec& s) { s.lengths[0] = b.pages_per_seq * s.page_size + 1; });
    });
    err("rejects a length of 0", [] {
        return rejects<std::out_of_range>("lengths[1] = 0", {"lengths[1]"}, kSmall, true, [](Batch&, Spec& s) { s.lengths[1] = 0; });
    });
    err("float32 append rejects a page outside the pool", [] { return rejects_f32(true); });
    err("float32 decode rejects a page outside the pool", [] { return rejects_f32(false); });
    return cases;
}

}  // namespace task5
