// cases.cpp — Task 1's graded cases: each step on its own (course case), then the whole
// attention on every golden shape. Inputs come from goldens/task1 (make goldens).
#include "task1/cases.h"

#include <fmt/format.h>

#include "common/check.h"
#include "common/diagnose.h"
#include "common/cpu_ops.h"
#include "common/golden.h"
#include "common/seed.h"
#include "task1/task1.h"

namespace task1 {
namespace {

using namespace attn;

const std::vector<std::string> kBHSD = {"b", "h", "s", "d"}, kBHSS = {"b", "h", "i", "j"}, kBSE = {"b", "s", "e"};

struct Dims {
    int B, S, hidden, H, D;
    bool causal;
};

Dims dims_of(const SafetensorsFile& f) {
    Dims d{golden_int(f, "B"), golden_int(f, "S"), golden_int(f, "hidden"), golden_int(f, "heads"), 0,
           golden_int(f, "causal") != 0};
    d.D = d.hidden / d.H;
    return d;
}

std::string shape_of(const Dims& d) {
    return fmt::format("B={} S={} hidden={} heads={}{}", d.B, d.S, d.hidden, d.H, d.causal ? " causal" : "");
}

// The whole attention: the harness projects, the submission attends, the harness projects back.
CaseResult full_case(const std::string& name) {
    SafetensorsFile f = open_golden("task1", name);
    const Dims d = dims_of(f);
    const Tolerance tol = golden_tolerance(f);
    const Shape bse = {d.B, d.S, d.hidden}, ee = {d.hidden, d.hidden};
    const Tensor x = f.load_f32("x", bse);
    const Tensor q = linear_nt(x, f.load_f32("w_q", ee)), k = linear_nt(x, f.load_f32("w_k", ee)),
                 v = linear_nt(x, f.load_f32("w_v", ee));
    const Tensor q0 = q, k0 = k, v0 = v;

    CaseResult r;
    r.shape = shape_of(d);
    Tensor attn(bse);
    poison(attn);
    r.ms = wall_ms([&] { naive_mha(q.ptr(), k.ptr(), v.ptr(), attn.ptr(), d.B, d.S, d.hidden, d.H, d.causal); });
    if (!inputs_unchanged(r, "q", q0, q) || !inputs_unchanged(r, "k", k0, k) || !inputs_unchanged(r, "v", v0, v))
        return r;
    if (!check_output(r, "attention (before the output projection)", attn, f.load_f32("attn", bse), tol, kBSE)) {
        add_diagnosis(r, diagnose_attention_bse(attn, q, k, v, d.H, d.causal, tol));
        return r;
    }
    if (!check_output(r, "output", linear_nt(attn, f.load_f32("w_o", ee)), f.load_f32("out", bse), tol, kBSE)) return r;
    r.status = "passed";
    return r;
}

// One step in isolation, fed the golden's own intermediate tensors.
template <class Step>
CaseResult step_case(const std::string& golden, const std::string& in_name, const std::string& want_name,
                     const std::vector<std::string>& dims, Step step) {
    SafetensorsFile f = open_golden("task1", golden);
    const Dims d = dims_of(f);
    const Tensor in = f.load_f32(in_name), want = f.load_f32(want_name);
    CaseResult r;
    r.shape = shape_of(d);
    Tensor got(want.shape);
    poison(got);
    step(f, d, in, got);
    if (check_output(r, want_name, got, want, golden_tolerance(f), dims)) r.status = "passed";
    return r;
}

// Fresh inputs from GRADER_SEED, checked against attention in double precision. Two calls on the
// same buffers with different values: a result cached between calls fails the second.
CaseResult fresh_case(int draw) {
    auto g = rng_for("task1.fresh." + std::to_string(draw));
    const int B = uniform_int(g, 1, 3), S = uniform_int(g, 1, 200), H = pick(g, std::vector<int>{1, 2, 4, 8}),
              D = pick(g, std::vector<int>{8, 16, 32});
    const Dims d{B, S, H * D, H, D, draw % 2 == 1};
    const Shape bse = {B, S, d.hidden};
    const float peak = peak_scale(g, draw);
    // peaky draws: the tolerance × peak², as Task 4's (docs/perf.md, "Peaky inputs")
    const Tolerance tol = scaled_for_peak(Tolerance{2e-5, 1e-4}, peak);
    CaseResult r;
    r.shape = shape_of(d) + fmt::format(" (seed {}{})", grader_seed(), peak_note(peak));
    Tensor q(bse), k(bse), v(bse), out(bse);
    for (int call = 1; call <= 2; ++call) {
        refill(g, q, peak), refill(g, k, peak), refill(g, v);
        const Tensor q0 = q, k0 = k, v0 = v;
        poison(out);
        naive_mha(q.ptr(), k.ptr(), v.ptr(), out.ptr(), B, S, d.hidden, H, d.causal);
        if (!inputs_unchanged(r, "q", q0, q) || !inputs_unchanged(r, "k", k0, k) || !inputs_unchanged(r, "v", v0, v))
            return r;
        const Tensor want = from_heads(attention_f64(to_heads(q, H), to_heads(k, H), to_heads(v, H), d.causal));
        if (!check_output(r, fmt::format("call {} of 2", call), out, want, tol, kBSE)) {
            add_diagnosis(r, diagnose_attention_bse(out, q, k, v, H, d.causal, tol));
            return r;
        }
    }
    r.status = "passed";
    return r;
}

}  // namespace

std::vector<GradeCase> grade_cases() {
    std::vector<GradeCase> cases;
    for (const char* g : {"course", "course_causal"}) {
        const std::string suffix = std::string(g) == "course" ? "" : " (causal)";
        cases.push_back({"step 1.1 split_heads" + suffix, 0.5, [g] {
            return step_case(g, "x", "q_heads", kBHSD, [](auto& f, const Dims& d, const Tensor&, Tensor& got) {
                const Tensor q = linear_nt(f.load_f32("x"), f.load_f32("w_q"));
                split_heads(q.ptr(), got.ptr(), d.B, d.S, d.H, d.D);
            });
        }, "steps"});
        cases.push_back({"step 1.2 attention_scores" + suffix, 0.5, [g] {
            return step_case(g, "q_heads", "scores", kBHSS, [](auto& f, const Dims& d, const Tensor& qh, Tensor& got) {
                attention_scores(qh.ptr(), f.load_f32("k_heads").ptr(), got.ptr(), d.B * d.H, d.S, d.D);
            });
        }, "steps"});
        cases.push_back({"step 1.3+1.4 mask and softmax" + suffix, 0.5, [g] {
            return step_case(g, "scores", "probs", kBHSS, [](auto&, const Dims& d, const Tensor& scores, Tensor& got) {
                got = scores;
                if (d.causal) apply_causal_mask(got.ptr(), d.B * d.H, d.S);
                softmax_rows(got.ptr(), int64_t(d.B) * d.H * d.S, d.S);
            });
        }, "steps"});
        cases.push_back({"step 1.5 attention_output" + suffix, 0.5, [g] {
            return step_case(g, "probs", "attn_heads", kBHSD, [](auto& f, const Dims& d, const Tensor& p, Tensor& got) {
                attention_output(p.ptr(), f.load_f32("v_heads").ptr(), got.ptr(), d.B * d.H, d.S, d.D);
            });
        }, "steps"});
        cases.push_back({"step 1.6 merge_heads" + suffix, 0.5, [g] {
            return step_case(g, "attn_heads", "attn", kBSE, [](auto&, const Dims& d, const Tensor& oh, Tensor& got) {
                merge_heads(oh.ptr(), got.ptr(), d.B, d.S, d.H, d.D);
            });
        }, "steps"});
    }
    for (const char* name : {"course", "course_causal", "s1_causal", "s127_h256", "s127_h256_causal", "s512_causal",
                             "large_scores"})
        cases.push_back({name, 1.0, [name] { return full_case(name); }, "attention"});
    for (int draw = 0; draw < 4; ++draw)
        cases.push_back({fmt::format("fresh inputs #{}", draw + 1), 1.0, [draw] { return fresh_case(draw); }, "fresh"});
    return cases;
}

}  // namespace task1
