// cases_bf16_backward.cpp — Task 4's bf16 backward bonus (4d), graded on the GPU. Inputs q, k, v, dout and the
// forward's O are bf16, lse float32; every expected gradient is float64 computed from the bf16-rounded inputs (torch's
// autograd for the golden files, tools/goldens/make_goldens.py; the float64 oracle of common/cuda/backward_oracle.h on
// the CPU for fresh shapes and inputs from GRADER_SEED, and on the GPU for long rows and the memory case). O and lse
// come from the same float64 forward (O rounded to bf16, as a bf16 forward would hand it over), so the backward is
// judged on its own. The tolerance (task4_bf16_backward/README.md), set from torch's own bf16 backwards against
// float64 on the same inputs (docs/perf.md): |got − want| ≤ 2e-2 + 2e-2·|want| for every element of dQ, dK and dV,
// and each gradient's relative L2 error ‖got − want‖/‖want‖ ≤ 6e-3 — twice the worst library's on both counts. A
// failing gradient's reason says what passed before it (dV, then dK, then dQ), which is where the bug is: the
// controls (task4_bf16_backward/controls/*.patch) each fail for their own reason.
// The forward with lse (flash_attention_forward_bf16_lse, suite "forward") is judged on the same goldens and oracles:
// O within 4b's tolerance (task4_bf16/README.md), lse +∞ exactly where a row sees no key and within 1e-4 + 1e-4·|lse|
// elsewhere — a tenth of what would move a bf16 probability, exp(s − lse), by one rounding step (2⁻⁸ ≈ 4e-3).
#include "task4_bf16_backward/cases_bf16_backward.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <tuple>

#include "common/check.h"
#include "common/diagnose_backward.h"
#include "common/cuda/backward_oracle.h"
#include "common/cuda/backward_shape.h"
#include "common/cuda/bf16_tensor.h"
#include "common/cuda/gpu_case.h"
#include "common/cuda/memory_watch.h"
#include "common/golden.h"
#include "common/seed.h"
#include "task4_bf16_backward/task4_bf16_backward.h"

namespace task4 {
namespace {

using namespace attn;
const std::vector<std::string> kDims = {"b", "h", "s", "d"};
const Tolerance kTol{2e-2, 2e-2};  // dQ, dK, dV element-wise (README)
constexpr double kRelL2 = 6e-3;    // each gradient's ‖got − want‖ / ‖want‖ (README)
const Tolerance kForwardTol{4e-3, 1.6e-2};  // the forward's O: 4b's (task4_bf16/cases_bf16.cpp)
constexpr double kForwardRelL2 = 4e-3;
const Tolerance kLseTol{1e-4, 1e-4};  // the forward's lse (above)

// A case's inputs (host; q, k, v, dout and o bf16-exact) and the gradients it expects.
struct Expected {
    Tensor q, k, v, dout, o, lse, dq, dk, dv;
    Tolerance tol = kTol;  // the gradients' (a golden file may carry its own)
    double rel_l2 = kRelL2;
};

// The expected values for bf16-rounded q, k, v, dout from an oracle's float64 answer.
Expected from_oracle(Tensor q, Tensor k, Tensor v, Tensor dout, const AttentionGrads& want) {
    Expected e{std::move(q), std::move(k), std::move(v), std::move(dout), want.o, want.lse, want.dq, want.dk, want.dv};
    round_to_bf16(e.o);
    return e;
}

// Draws q, k, v, dout (normal; q and k × peak) rounded to bf16.
std::tuple<Tensor, Tensor, Tensor, Tensor> bf16_inputs(std::mt19937_64& g, const Shape4& s, float peak = 1.0f) {
    Tensor q = random_tensor(g, s.qs(), peak), k = random_tensor(g, s.ks(), peak), v = random_tensor(g, s.ks()),
           dout = random_tensor(g, s.qs());
    for (Tensor* t : {&q, &k, &v, &dout}) round_to_bf16(*t);
    return {q, k, v, dout};
}

// Gradient `grad` (its label `what`) against its expected value: every element within e.tol, then the whole within e.rel_l2;
// a failure names the mistake it matches, or where it lives (common/diagnose_backward.h).
bool check_grad(CaseResult& r, const std::string& grad, const std::string& what, const Tensor& got, const Tensor& want,
                const Expected& e, bool causal) {
    if (!check_output(r, what, got, want, e.tol, kDims)) {
        add_diagnosis(r, diagnose_backward(grad, got, e.q, e.k, e.v, e.dout, causal, e.tol));
        return false;
    }
    return relative_l2_within(r, what, got, want, e.rel_l2, "a sum kept in bf16, or dS rounded before δ is subtracted?",
                              "relative L2 error of " + grad);
}

// One backward on device copies: dV, then dK, then dQ, each failure saying which passed before it.
bool check_backward(CaseResult& r, const std::string& call, const Shape4& s, const Expected& e) {
    Bf16Buffer q(e.q.data.size()), k(e.k.data.size()), v(e.v.data.size()), o(e.o.data.size()), dout(e.dout.data.size());
    q.upload(e.q), k.upload(e.k), v.upload(e.v), o.upload(e.o), dout.upload(e.dout);
    auto lse = to_device(e.lse);
    Bf16Buffer dq(e.q.data.size()), dk(e.k.data.size()), dv(e.v.data.size());
    dq.poison(), dk.poison(), dv.poison();
    flash_attention_backward_bf16(q.get(), k.get(), v.get(), o.get(), dout.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B, s.H,
                                  s.Sq, s.Sk, s.D, s.causal);
    sync_default_stream();
    for (const auto& [name, t, d] : {std::tuple{"q", &e.q, &q}, std::tuple{"k", &e.k, &k}, std::tuple{"v", &e.v, &v},
                                     std::tuple{"o", &e.o, &o}, std::tuple{"dout", &e.dout, &dout}})
        if (!bf16_input_unchanged(r, name, *t, *d)) return false;
    if (!device_input_unchanged(r, "lse", e.lse, lse)) return false;
    const std::string c = s.causal ? " [causal]" : "";
    return check_grad(r, "dV", call + "dV" + c, dv.download(s.ks()), e.dv, e, s.causal) &&
           check_grad(r, "dK", call + "dK" + c + " (dV is right)", dk.download(s.ks()), e.dk, e, s.causal) &&
           check_grad(r, "dQ", call + "dQ" + c + " (dK and dV are right)", dq.download(s.qs()), e.dq, e, s.causal);
}

// The forward with lse on device copies of q, k, v: lse against the expected one, then O.
bool check_forward(CaseResult& r, const Shape4& s, const Expected& e) {
    Bf16Buffer q(e.q.data.size()), k(e.k.data.size()), v(e.v.data.size()), o(e.o.data.size());
    q.upload(e.q), k.upload(e.k), v.upload(e.v), o.poison();
    auto lse = poisoned_output(s.ls());
    flash_attention_forward_bf16_lse(q.get(), k.get(), v.get(), o.get(), lse.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
    sync_default_stream();
    for (const auto& [name, t, d] : {std::tuple{"q", &e.q, &q}, std::tuple{"k", &e.k, &k}, std::tuple{"v", &e.v, &v}})
        if (!bf16_input_unchanged(r, name, *t, *d)) return false;
    Tensor got_lse;
    if (!read_output(r, lse, s.ls(), got_lse)) return false;
    const std::string c = s.causal ? " [causal]" : "";
    if (!check_lse(r, "forward: lse" + c, got_lse, e.lse, kLseTol)) return false;
    r.metrics["lse: largest error"] = r.max_abs_err, r.metrics["lse: largest share of its tolerance"] = r.tol_share;
    const Tensor got_o = o.download(s.qs());
    return check_output(r, "forward: O" + c, got_o, e.o, kForwardTol, kDims) &&
           relative_l2_within(r, "forward: O" + c, got_o, e.o, kForwardRelL2, "an accumulator or a softmax statistic kept in bf16?");
}

Expected golden_expected(const std::string& golden, Shape4& s) {
    SafetensorsFile f = open_golden("task4", golden);
    s = Shape4{golden_int(f, "B"), golden_int(f, "H"), golden_int(f, "Sq"), golden_int(f, "Sk"), golden_int(f, "D"),
               golden_int(f, "causal") != 0};
    Expected e{f.load_f32("q", s.qs()),  f.load_f32("k", s.ks()),   f.load_f32("v", s.ks()),
                     f.load_f32("dout", s.qs()), f.load_f32("out", s.qs()), f.load_f32("lse", s.ls()),
                     f.load_f32("dq", s.qs()), f.load_f32("dk", s.ks()),  f.load_f32("dv", s.ks())};
    for (const Tensor* t : {&e.q, &e.k, &e.v, &e.dout, &e.o})
        for (float x : t->data)
            if (bf16_value(bf16_bits(x)) != x) throw std::runtime_error(golden + ": an input is not bf16-exact (stale golden)");
    e.tol = golden_tolerance(f);
    return e;
}

CaseResult golden_case(const std::string& golden) {
    Shape4 s{};
    const Expected e = golden_expected(golden, s);
    CaseResult r;
    r.shape = s.str();
    r.ms = wall_ms([&] {
        if (check_backward(r, "", s, e)) r.status = "passed";
    });
    return r;
}

// The forward with lse on a golden's q, k, v (its O and lse: float64, O rounded to bf16).
CaseResult forward_golden_case(const std::string& golden) {
    Shape4 s{};
    const Expected e = golden_expected(golden, s);
    CaseResult r;
    r.shape = s.str();
    r.ms = wall_ms([&] {
        if (check_forward(r, s, e)) r.status = "passed";
    });
    return r;
}

// B·H = 70000 heads, past gridDim.y's 65535: causal with Sq = 2 > Sk = 1 — row 0 sees no key (zero gradients), row 1
// sees one (P = 1, so dV = its dout and dS = 0): every head's place in the grid and in memory is checked, and almost
// nothing of bf16's rounding (the tail of the tolerance that millions of short rows would find). At D = 32 and at
// D = 128: on Hopper the reference takes another kernel for each (rung 1 at D = 32, rung 2 at 64 and 128).
CaseResult many_heads_case(int D) {
    auto g = rng_for(D == 32 ? "task4-bf16-backward.many_heads" : fmt::format("task4-bf16-backward.many_heads.d{}", D));
    const Shape4 s{70, 1000, 2, 1, D, true};
    CaseResult r;
    r.shape = s.str() + " (B·H = 70000: past gridDim.y's 65535)";
    auto [q, k, v, dout] = bf16_inputs(g, s);
    const AttentionGrads want = attention_backward_f64(q, k, v, dout, s.causal);
    if (check_backward(r, "", s, from_oracle(q, k, v, dout, want))) r.status = "passed";
    return r;
}

// The float64 oracle on the GPU for bf16 inputs drawn here.
Expected gpu_expected(const Shape4& s, const std::string& name) {
    auto g = rng_for(name);
    auto [hq, hk, hv, hdout] = bf16_inputs(g, s);
    auto q = to_device(hq), k = to_device(hk), v = to_device(hv), dout = to_device(hdout);
    DeviceBuffer<float> o(hq.data.size()), lse(size_t(numel(s.ls()))), dq(hq.data.size()), dk(hk.data.size()), dv(hk.data.size());
    attention_backward_f64_gpu(q.get(), k.get(), v.get(), dout.get(), o.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B * s.H,
                               s.Sq, s.Sk, s.D, s.causal);
    return from_oracle(hq, hk, hv, hdout,
                       {to_host(o, s.qs()), to_host(lse, s.ls()), to_host(dq, s.qs()), to_host(dk, s.ks()), to_host(dv, s.ks())});
}

// The forward with lse on fresh shapes: long rows against the float64 GPU oracle, and B·H = 70000 heads with a row
// that sees no key (causal, Sq = 2 > Sk = 1).
CaseResult forward_fresh_case(const Shape4& s, const std::string& note) {
    CaseResult r;
    r.shape = fmt::format("{}{} (float64 GPU oracle, seed {})", s.str(), note, grader_seed());
    const Expected e = gpu_expected(s, "task4-bf16-backward.forward." + s.str());
    r.ms = wall_ms([&] {
        if (check_forward(r, s, e)) r.status = "passed";
    });
    return r;
}

// Fresh shapes and inputs from GRADER_SEED against the float64 oracle on the CPU; two calls with different values.
CaseResult fresh_case(int draw) {
    auto g = rng_for("task4-bf16-backward.fresh." + std::to_string(draw));
    const int Sq = uniform_int(g, 1, 500);
    const Shape4 s{uniform_int(g, 1, 2), uniform_int(g, 1, 3), Sq, draw % 3 == 2 ? uniform_int(g, 1, 500) : Sq,
                   pick(g, std::vector<int>{32, 64, 128}), draw % 2 == 1};
    // Peaky inputs in the later draws (q and k ×2–4), the element-wise tolerance × peak² (compare.h, scaled_for_peak) and
    // the relative L2 bound × (1 + peak)/2: torch's bf16 backwards (FA2, cuDNN, efficient) miss the unscaled ones there
    // by as much as this reference — elements up to 4.4×, the L2 error 6.4e-3 at ×4 (2.4e-3 unscaled) — from dS rounded
    // to bf16 before it meets q and k (docs/perf.md, "Peaky inputs"); the L2 bound stays twice torch's worst.
    const float peak = peak_scale(g, draw);
    CaseResult r;
    r.shape = fmt::format("{} (seed {}{})", s.str(), grader_seed(), peak_note(peak));
    for (int call = 1; call <= 2; ++call) {
        auto [q, k, v, dout] = bf16_inputs(g, s, peak);
        const AttentionGrads want = attention_backward_f64(q, k, v, dout, s.causal);
        Expected e = from_oracle(q, k, v, dout, want);
        e.tol = scaled_for_peak(e.tol, peak), e.rel_l2 = kRelL2 * (1 + peak) / 2;
        if (!check_backward(r, fmt::format("call {} of 2: ", call), s, e)) return r;
    }
    r.status = "passed";
    return r;
}

// Long rows (32–64 tiles of keys and of queries) against the float64 oracle on the GPU.
CaseResult long_case(const Shape4& s) {
    CaseResult r;
    r.shape = fmt::format("{} (float64 GPU oracle, seed {})", s.str(), grader_seed());
    const Expected e = gpu_expected(s, "task4-bf16-backward.long." + s.str());
    r.ms = wall_ms([&] {
        if (check_backward(r, "", s, e)) r.status = "passed";
    });
    return r;
}

// No Sq × Sk buffer: during a backward at S = 16384 (0.54 GB of bf16 scores for the one head, 1.07 GB in float32) the
// runner's memory beyond the null runner's, from before it starts (common/cuda/memory_watch.h), must stay below a
// quarter of the float32 scores. Then the gradients against the oracle.
CaseResult memory_case() {
    const Shape4 s{1, 1, 16384, 16384, 64, true};
    const double s_by_s = double(s.Sq) * s.Sk * sizeof(float);
    CaseResult r;
    r.shape = fmt::format("{} (memory watched; float64 GPU oracle, seed {})", s.str(), grader_seed());
    const Expected e = gpu_expected(s, "task4-bf16-backward.memory");
    Bf16Buffer q(e.q.data.size()), k(e.k.data.size()), v(e.v.data.size()), o(e.o.data.size()), dout(e.dout.data.size());
    q.upload(e.q), k.upload(e.k), v.upload(e.v), o.upload(e.o), dout.upload(e.dout);
    auto lse = to_device(e.lse);
    Bf16Buffer dq(e.q.data.size()), dk(e.k.data.size()), dv(e.v.data.size());
    const RunnerMemory extra = runner_memory_beyond_null(
        [&] {
            flash_attention_backward_bf16(q.get(), k.get(), v.get(), o.get(), dout.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B,
                                          s.H, s.Sq, s.Sk, s.D, s.causal);
            sync_default_stream();
        },
        [&] { dq.poison(), dk.poison(), dv.poison(); });
    r.ms = extra.ms;
    r.metrics["runner device bytes beyond the null runner's"] = extra.device_bytes;
    r.metrics["runner host bytes beyond the null runner's"] = extra.host_bytes;
    for (const auto& [where, bytes] : {std::pair{"device", extra.device_bytes}, std::pair{"host", extra.host_bytes}})
        if (bytes >= 0.25 * s_by_s) {
            r.reason = fmt::format("the runner took {:.2f} GB of {} memory more than the harness alone does for the same call "
                                   "(from its start, constructors included), at least a quarter of the Sq×Sk float32 scores "
                                   "({:.2f} GB): P and dS must be recomputed tile by tile from lse, never stored whole",
                                   bytes / 1e9, where, s_by_s / 1e9);
            return r;
        }
    if (check_grad(r, "dV", "dV [causal]", dv.download(s.ks()), e.dv, e, s.causal) &&
        check_grad(r, "dK", "dK [causal] (dV is right)", dk.download(s.ks()), e.dk, e, s.causal) &&
        check_grad(r, "dQ", "dQ [causal] (dK and dV are right)", dq.download(s.qs()), e.dq, e, s.causal))
        r.status = "passed";
    return r;
}

// The bad argument must be refused with std::invalid_argument naming `name`: by the backward, or (`forward`) by the
// forward with lse.
CaseResult rejects(const std::string& what, const std::string& name, int Sk, int D, bool null_lse, bool forward = false) {
    CaseResult r;
    r.shape = what;
    const size_t n = size_t(16) * D;  // 16 rows of q, k, v, …: what the proxy sends (Sk ≤ 16)
    Bf16Buffer a(n), b(n), c(n), o(n), g(n), x(n), y(n), z(n);
    DeviceBuffer<float> l(16);
    float* lse = null_lse ? nullptr : l.get();
    const char* fn = forward ? "flash_attention_forward_bf16_lse" : "flash_attention_backward_bf16";
    expect_throw<std::invalid_argument>(
        r, [&] {
            if (forward)
                flash_attention_forward_bf16_lse(a.get(), b.get(), c.get(), o.get(), lse, 1, 1, 16, Sk, D, false);
            else
                flash_attention_backward_bf16(a.get(), b.get(), c.get(), o.get(), g.get(), lse, x.get(), y.get(), z.get(), 1, 1, 16,
                                              Sk, D, false);
            sync_default_stream();
        },
        {name}, fmt::format("{} accepted {}: it must throw std::invalid_argument naming {}", fn, what, name));
    return r;
}

}  // namespace

std::vector<GradeCase> bf16_backward_grade_cases() {
    std::vector<GradeCase> cases;
    for (const char* g : {"bf16bwd_b2_h8_s256_d128", "bf16bwd_b2_h8_s256_d128_causal", "bf16bwd_s1_d64_causal",
                          "bf16bwd_s127_d32_causal", "bf16bwd_s129_d128", "bf16bwd_s1000_d64_causal", "bf16bwd_cross_q100_k300_d64",
                          "bf16bwd_cross_q77_k200_d128_causal", "bf16bwd_cross_q300_k100_d32_causal"})
        cases.push_back({g, 1.0, [g] { return golden_case(g); }, "golden"});
    for (int draw = 0; draw < 4; ++draw)
        cases.push_back({fmt::format("fresh inputs #{}", draw + 1), 1.0, [draw] { return fresh_case(draw); }, "fresh"});
    cases.push_back({"B·H = 70000 heads (past gridDim.y's 65535)", 1.0, [] { return many_heads_case(32); }, "fresh"});
    cases.push_back({"B·H = 70000 heads at D = 128", 1.0, [] { return many_heads_case(128); }, "fresh"});
    for (const Shape4& s : {Shape4{1, 2, 2048, 2048, 128, false}, Shape4{1, 2, 2048, 2048, 64, true}, Shape4{1, 3, 2500, 1100, 32, true},
                            Shape4{1, 2, 1500, 700, 128, true}})
        cases.push_back({"long: " + s.str(), 1.0, [s] { return long_case(s); }, "long"});
    cases.push_back({"no Sq×Sk buffer at S=16384", 1.0, [] { return memory_case(); }, "memory"});
    cases.push_back({"rejects head_dim 96", 0.5, [] { return rejects("head_dim 96", "96", 16, 96, false); }, "errors"});
    cases.push_back({"rejects head_dim 256", 0.5, [] { return rejects("head_dim 256", "256", 16, 256, false); }, "errors"});
    cases.push_back({"rejects a null lse", 0.5, [] { return rejects("lse = nullptr", "lse", 16, 64, true); }, "errors"});
    cases.push_back({"rejects Sk = 0", 0.5, [] { return rejects("Sk = 0", "Sk", 0, 64, false); }, "errors"});
    // the forward with lse (task4d.7), for training
    for (const char* g : {"bf16bwd_b2_h8_s256_d128_causal", "bf16bwd_s1_d64_causal", "bf16bwd_s129_d128", "bf16bwd_s1000_d64_causal",
                          "bf16bwd_cross_q100_k300_d64", "bf16bwd_cross_q77_k200_d128_causal"})
        cases.push_back({std::string("forward+lse: ") + g, 0.5, [g] { return forward_golden_case(g); }, "forward"});
    for (const auto& [s, note] : {std::pair{Shape4{1, 2, 2048, 2048, 128, false}, ""}, std::pair{Shape4{2, 3, 1100, 2500, 64, true}, ""},
                                  std::pair{Shape4{2, 2, 700, 300, 128, true}, " (400 rows see no key)"},
                                  std::pair{Shape4{1, 2, 4100, 4100, 64, true}, " (Hopper: 4b's three consumer warpgroups)"},
                                  std::pair{Shape4{70, 1000, 2, 1, 64, true}, " (B·H = 70000)"}})
        cases.push_back({"forward+lse: " + s.str() + note, 0.5, [s = s, note = note] { return forward_fresh_case(s, note); }, "forward"});
    cases.push_back({"forward+lse rejects head_dim 32", 0.25, [] { return rejects("head_dim 32", "32", 16, 32, false, true); }, "forward"});
    cases.push_back({"forward+lse rejects a null lse", 0.25, [] { return rejects("lse = nullptr", "lse", 16, 64, true, true); }, "forward"});
    return cases;
}

}  // namespace task4
