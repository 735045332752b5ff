// cases_backward.cpp — Task 4's backward bonus (4c), graded on the GPU. Each case calls the forward with lse and
// checks O and lse, then calls the backward on the expected O and lse (so that it is judged on its own) and checks
// dV, dK and dQ. Expected values: torch's float64 autograd (golden files, tools/goldens/make_goldens.py), the float64 oracle
// of common/cuda/backward_oracle.h on the CPU (fresh shapes and inputs from GRADER_SEED) and on the GPU (long rows, and the
// memory case at S = 16384). The tolerance (task4/README.md, "Bonus: the backward pass") is the forward's,
// |got − want| ≤ 2e-5 + 1e-4·|want|, for O and for every gradient; lse must be +∞ exactly where a row sees no key
// (an unwritten lse is NaN and fails) and within 2e-5 + 2e-5·|lse| elsewhere. A failing gradient's reason says what
// passed before it (dV, then dK, then dQ), which is where the bug is: the controls (task4_backward/controls/*.patch)
// each fail for their own reason.
#include "task4_backward/cases_backward.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "common/check.h"
#include "common/diagnose_backward.h"
#include "common/cuda/gpu_case.h"
#include "common/cuda/memory_watch.h"
#include "common/golden.h"
#include "common/seed.h"
#include "common/cuda/backward_oracle.h"
#include "common/cuda/backward_shape.h"
#include "task4_backward/task4_backward.h"

namespace task4 {
namespace {

using namespace attn;
const std::vector<std::string> kDims = {"b", "h", "s", "d"};
const Tolerance kTol{2e-5, 1e-4};     // O, dQ, dK, dV (README: torch's own float32 backward uses ≤ 16 % of it)
const Tolerance kLseTol{2e-5, 2e-5};  // lse (|lse| ≈ log Sk + a few)

// The inputs of a case and what it expects (host tensors).
struct Expected {
    Tensor q, k, v, dout;
    AttentionGrads want;
};

// The forward with lse on device copies of the inputs: O and lse against the expected ones (`peak`: q and k scaled by it,
// the tolerances by its square; compare.h, scaled_for_peak).
bool check_forward(CaseResult& r, const std::string& call, const Shape4& s, const Expected& e, float peak = 1.0f) {
    auto dq = to_device(e.q), dk = to_device(e.k), dv = to_device(e.v);
    auto o = poisoned_output(s.qs()), lse = poisoned_output(s.ls());
    flash_attention_forward_lse(dq.get(), dk.get(), dv.get(), o.get(), lse.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
    Tensor got_o, got_lse;
    if (!read_output(r, lse, s.ls(), got_lse) || !read_output(r, o, s.qs(), got_o) || !device_input_unchanged(r, "q", e.q, dq) ||
        !device_input_unchanged(r, "k", e.k, dk) || !device_input_unchanged(r, "v", e.v, dv))
        return false;
    return check_lse(r, call + "forward: lse", got_lse, e.want.lse, scaled_for_peak(kLseTol, peak)) &&
           check_output(r, call + "forward: O", got_o, e.want.o, scaled_for_peak(kTol, peak), kDims);
}

// The backward on the expected O and lse: dV, then dK, then dQ, each failure saying which passed before it.
bool check_backward(CaseResult& r, const std::string& call, const Shape4& s, const Expected& e, Tolerance tol) {
    auto dq_in = to_device(e.q), dk_in = to_device(e.k), dv_in = to_device(e.v), o = to_device(e.want.o), g = to_device(e.dout),
         lse = to_device(e.want.lse);
    auto dq = poisoned_output(s.qs()), dk = poisoned_output(s.ks()), dv = poisoned_output(s.ks());
    flash_attention_backward(dq_in.get(), dk_in.get(), dv_in.get(), o.get(), g.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B,
                             s.H, s.Sq, s.Sk, s.D, s.causal);
    Tensor got_dq, got_dk, got_dv;
    if (!read_output(r, dv, s.ks(), got_dv) || !read_output(r, dk, s.ks(), got_dk) || !read_output(r, dq, s.qs(), got_dq))
        return false;
    for (const auto& [name, t, d] : {std::tuple{"q", &e.q, &dq_in}, std::tuple{"k", &e.k, &dk_in}, std::tuple{"v", &e.v, &dv_in},
                                     std::tuple{"o", &e.want.o, &o}, std::tuple{"dout", &e.dout, &g}, std::tuple{"lse", &e.want.lse, &lse}})
        if (!device_input_unchanged(r, name, *t, *d)) return false;
    const std::string c = s.causal ? " [causal]" : "";
    auto judged = [&](const char* grad, const std::string& what, const Tensor& got, const Tensor& want) {
        if (check_output(r, what, got, want, tol, kDims)) return true;
        add_diagnosis(r, diagnose_backward(grad, got, e.q, e.k, e.v, e.dout, s.causal, tol));  // common/diagnose_backward.h
        return false;
    };
    return judged("dV", call + "dV" + c, got_dv, e.want.dv) && judged("dK", call + "dK" + c + " (dV is right)", got_dk, e.want.dk) &&
           judged("dQ", call + "dQ" + c + " (dK and dV are right)", got_dq, e.want.dq);
}

CaseResult golden_case(const std::string& golden) {
    SafetensorsFile f = open_golden("task4", golden);
    const Shape4 s{golden_int(f, "B"), golden_int(f, "H"), golden_int(f, "Sq"), golden_int(f, "Sk"), golden_int(f, "D"),
                   golden_int(f, "causal") != 0};
    Expected e{f.load_f32("q", s.qs()), f.load_f32("k", s.ks()), f.load_f32("v", s.ks()), f.load_f32("dout", s.qs()),
               {f.load_f32("out", s.qs()), f.load_f32("lse", s.ls()), f.load_f32("dq", s.qs()), f.load_f32("dk", s.ks()),
                f.load_f32("dv", s.ks())}};
    CaseResult r;
    r.shape = s.str();
    r.ms = wall_ms([&] {
        if (check_forward(r, "", s, e) && check_backward(r, "", s, e, golden_tolerance(f))) r.status = "passed";
    });
    return r;
}

// Fresh shapes and inputs from GRADER_SEED against the float64 oracle on the CPU; two calls with different values.
CaseResult fresh_case(int draw) {
    auto g = rng_for("task4-backward.fresh." + std::to_string(draw));
    const int Sq = uniform_int(g, 1, 500);
    const Shape4 s{uniform_int(g, 1, 2), uniform_int(g, 1, 3), Sq, draw % 3 == 2 ? uniform_int(g, 1, 500) : Sq,
                   pick(g, std::vector<int>{32, 64, 96, 128}), draw % 2 == 1};
    // Peaky inputs in the later draws, held to the tolerances × peak² (compare.h, scaled_for_peak: torch's own float32
    // backward passes no tighter one there; docs/perf.md, "Peaky inputs").
    const float peak = peak_scale(g, draw);
    CaseResult r;
    r.shape = fmt::format("{} (seed {}{})", s.str(), grader_seed(), peak_note(peak));
    for (int call = 1; call <= 2; ++call) {
        Expected e{random_tensor(g, s.qs(), peak), random_tensor(g, s.ks(), peak), random_tensor(g, s.ks()), random_tensor(g, s.qs()), {}};
        e.want = attention_backward_f64(e.q, e.k, e.v, e.dout, s.causal);
        const std::string label = fmt::format("call {} of 2: ", call);
        if (!check_forward(r, label, s, e, peak) || !check_backward(r, label, s, e, scaled_for_peak(kTol, peak))) return r;
    }
    r.status = "passed";
    return r;
}

// B·H = 70000 heads, past gridDim.y's 65535: one call at tiny Sq ≠ Sk against the float64 oracle on the CPU.
CaseResult many_heads_case() {
    auto g = rng_for("task4-backward.many_heads");
    const Shape4 s{70, 1000, 5, 7, 32, true};
    CaseResult r;
    r.shape = s.str() + " (B·H = 70000: past gridDim.y's 65535)";
    Expected e{random_tensor(g, s.qs()), random_tensor(g, s.ks()), random_tensor(g, s.ks()), random_tensor(g, s.qs()), {}};
    e.want = attention_backward_f64(e.q, e.k, e.v, e.dout, s.causal);
    if (check_forward(r, "", s, e) && check_backward(r, "", s, e, kTol)) r.status = "passed";
    return r;
}

// The float64 oracle on the GPU for inputs drawn here (host tensors).
Expected gpu_expected(const Shape4& s, const std::string& name) {
    auto g = rng_for(name);
    Expected e{random_tensor(g, s.qs()), random_tensor(g, s.ks()), random_tensor(g, s.ks()), random_tensor(g, s.qs()),
               {Tensor(s.qs()), Tensor(s.ls()), Tensor(s.qs()), Tensor(s.ks()), Tensor(s.ks())}};
    auto q = to_device(e.q), k = to_device(e.k), v = to_device(e.v), dout = to_device(e.dout);
    DeviceBuffer<float> o(e.q.data.size()), lse(size_t(numel(s.ls()))), dq(e.q.data.size()), dk(e.k.data.size()), dv(e.k.data.size());
    attention_backward_f64_gpu(q.get(), k.get(), v.get(), dout.get(), o.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B * s.H,
                               s.Sq, s.Sk, s.D, s.causal);
    e.want = {to_host(o, s.qs()), to_host(lse, s.ls()), to_host(dq, s.qs()), to_host(dk, s.ks()), to_host(dv, s.ks())};
    return e;
}

// Long rows (32–64 tiles of keys and of queries) against the float64 oracle on the GPU.
CaseResult long_case(const Shape4& s) {
    CaseResult r;
    r.shape = fmt::format("{} (float64 GPU oracle, seed {})", s.str(), grader_seed());
    const Expected e = gpu_expected(s, "task4-backward.long." + s.str());
    r.ms = wall_ms([&] {
        if (check_forward(r, "", s, e) && check_backward(r, "", s, e, kTol)) r.status = "passed";
    });
    return r;
}

// No Sq × Sk buffer: during a forward with lse and a backward at S = 16384 (1.07 GB of scores for the one head), the
// runner's memory must stay far below the scores'. Measured from this process as Task 4's fused case does: for a
// fresh runner from before it starts to the end of both calls — its CUDA context, its constructors and the calls — on
// the device (the GPU's used memory) and on the host (its peak resident memory), beyond what the null runner (the
// harness with a submission that does nothing) takes for the same calls. Then the outputs against the oracle.
CaseResult memory_case() {
    const Shape4 s{1, 1, 16384, 16384, 64, true};
    const double s_by_s = double(s.Sq) * s.Sk * sizeof(float);
    CaseResult r;
    r.shape = fmt::format("{} (memory watched; float64 GPU oracle, seed {})", s.str(), grader_seed());
    const Expected e = gpu_expected(s, "task4-backward.memory");
    auto q = to_device(e.q), k = to_device(e.k), v = to_device(e.v), dout = to_device(e.dout), o_in = to_device(e.want.o),
         lse_in = to_device(e.want.lse);
    auto o = poisoned_output(s.qs()), lse = poisoned_output(s.ls()), dq = poisoned_output(s.qs()), dk = poisoned_output(s.ks()),
         dv = poisoned_output(s.ks());
    const RunnerMemory m = runner_memory_beyond_null(
        [&] {
            flash_attention_forward_lse(q.get(), k.get(), v.get(), o.get(), lse.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
            flash_attention_backward(q.get(), k.get(), v.get(), o_in.get(), dout.get(), lse_in.get(), dq.get(), dk.get(), dv.get(),
                                     s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
        },
        [&] {
            for (auto* b : {&o, &lse, &dq, &dk, &dv}) b->poison();
        });
    r.ms = m.ms;
    const double extra = m.device_bytes, extra_host = m.host_bytes;
    r.metrics["runner device bytes beyond the null runner's"] = extra;
    r.metrics["runner host bytes beyond the null runner's"] = extra_host;
    for (const auto& [where, bytes] : {std::pair{"device", extra}, std::pair{"host", extra_host}})
        if (bytes >= 0.5 * s_by_s) {
            r.reason = fmt::format("the runner took {:.2f} GB of {} memory more than the harness alone does for the same calls "
                                   "(from its start, constructors included), at least half the Sq×Sk scores ({:.2f} GB): P "
                                   "and dS must be recomputed tile by tile from lse, never stored whole",
                                   bytes / 1e9, where, s_by_s / 1e9);
            return r;
        }
    Tensor got_o, got_lse, got_dq, got_dk, got_dv;
    if (!read_output(r, lse, s.ls(), got_lse) || !read_output(r, o, s.qs(), got_o) || !read_output(r, dv, s.ks(), got_dv) ||
        !read_output(r, dk, s.ks(), got_dk) || !read_output(r, dq, s.qs(), got_dq))
        return r;
    if (check_lse(r, "forward: lse", got_lse, e.want.lse, kLseTol) && check_output(r, "forward: O", got_o, e.want.o, kTol, kDims) &&
        check_output(r, "dV [causal]", got_dv, e.want.dv, kTol, kDims) &&
        check_output(r, "dK [causal] (dV is right)", got_dk, e.want.dk, kTol, kDims) &&
        check_output(r, "dQ [causal] (dK and dV are right)", got_dq, e.want.dq, kTol, kDims))
        r.status = "passed";
    return r;
}

// Both functions must refuse the bad argument with std::invalid_argument naming `name`.
CaseResult rejects(const std::string& what, const std::string& name, int Sk, int D, bool null_lse) {
    CaseResult r;
    r.shape = what;
    const int n = 16 * D;  // 16 rows of q, k, v, …: what the proxies send (Sk ≤ 16)
    DeviceBuffer<float> a(n), b(n), c(n), o(n), g(n), l(16), x(n), y(n), z(n);
    float* lse = null_lse ? nullptr : l.get();
    expect_throw<std::invalid_argument>(
        r, [&] {
            flash_attention_forward_lse(a.get(), b.get(), c.get(), o.get(), lse, 1, 1, 16, Sk, D, false);
            sync_default_stream();
        },
        {name}, fmt::format("flash_attention_forward_lse accepted {}: it must throw std::invalid_argument naming {}", what, name));
    if (r.status != "passed") return r;
    r.status = "failed";
    expect_throw<std::invalid_argument>(
        r, [&] {
            flash_attention_backward(a.get(), b.get(), c.get(), o.get(), g.get(), lse, x.get(), y.get(), z.get(), 1, 1, 16, Sk, D,
                                     false);
            sync_default_stream();
        },
        {name}, fmt::format("flash_attention_backward accepted {}: it must throw std::invalid_argument naming {}", what, name));
    return r;
}

}  // namespace

std::vector<GradeCase> backward_grade_cases() {
    std::vector<GradeCase> cases;
    for (const char* g : {"bwd_b4_h32_s128_d128", "bwd_b4_h32_s128_d128_causal", "bwd_s1_d64_causal", "bwd_s127_d32_causal",
                          "bwd_s129_d96", "bwd_s1000_d64", "bwd_h3_s1000_d128_causal", "bwd_h5_s513_d96_causal",
                          "bwd_cross_q100_k300_d64", "bwd_cross_q77_k200_d128_causal", "bwd_cross_q300_k100_d32_causal"})
        cases.push_back({g, 1.0, [g] { return golden_case(g); }, "golden"});
    for (int draw = 0; draw < 4; ++draw)
        cases.push_back({fmt::format("fresh inputs #{}", draw + 1), 1.0, [draw] { return fresh_case(draw); }, "fresh"});
    cases.push_back({"B·H = 70000 heads (past gridDim.y's 65535)", 1.0, [] { return many_heads_case(); }, "fresh"});
    for (const Shape4& s : {Shape4{1, 2, 2048, 2048, 128, false}, Shape4{1, 2, 2048, 2048, 64, true}, Shape4{1, 3, 2500, 1100, 96, true}})
        cases.push_back({"long: " + s.str(), 1.0, [s] { return long_case(s); }, "long"});
    cases.push_back({"no Sq×Sk buffer at S=16384", 1.0, [] { return memory_case(); }, "memory"});
    cases.push_back({"rejects head_dim 48", 0.5, [] { return rejects("head_dim 48", "48", 16, 48, false); }, "errors"});
    cases.push_back({"rejects head_dim 160", 0.5, [] { return rejects("head_dim 160", "160", 16, 160, false); }, "errors"});
    cases.push_back({"rejects a null lse", 0.5, [] { return rejects("lse = nullptr", "lse", 16, 64, true); }, "errors"});
    cases.push_back({"rejects Sk = 0", 0.5, [] { return rejects("Sk = 0", "Sk", 0, 64, false); }, "errors"});
    return cases;
}

}  // namespace task4
