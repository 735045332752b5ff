// cases.cpp — Task 2's graded cases, on the GPU, against goldens/task2: softmax over short, long
// and ragged rows (and scores large enough to overflow exp() without the max subtraction), and in
// place on a ragged shape; both
// GEMMs on square, large and ragged shapes; the whole attention against
// torch.nn.MultiheadAttention.
#include "task2/cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/diagnose.h"
#include "common/diagnose_kernels.h"
#include "common/cpu_ops.h"
#include "common/cuda/gpu_case.h"
#include "common/golden.h"
#include "common/seed.h"
#include "task2/task2.h"

namespace task2 {
namespace {

using namespace attn;

// in_place (task2.h: `out` may be `in`): the golden's rows are overwritten by their softmax, so a
// kernel that reads an element after another thread has overwritten it fails.
CaseResult softmax_case(const std::string& golden, bool in_place = false) {
    SafetensorsFile f = open_golden("task2", golden);
    const Tensor x = f.load_f32("x");
    const int cols = int(x.shape.back()), rows = int(x.size() / cols);
    CaseResult r;
    r.shape = fmt::format("{} rows × {} cols{}", rows, cols, in_place ? ", in place (out = in)" : "");
    auto dx = to_device(x);
    auto dy = poisoned_output(x.shape);
    float* out = in_place ? dx.get() : dy.get();
    r.ms = wall_ms([&] {
        softmax_batched(dx.get(), out, rows, cols);
        sync_default_stream();
    });
    Tensor y;
    if (!read_output(r, in_place ? dx : dy, x.shape, y) || (!in_place && !device_input_unchanged(r, "in", x, dx))) return r;
    if (check_output(r, in_place ? "softmax in place" : "softmax", y, f.load_f32("y", x.shape), golden_tolerance(f),
                     {"row", "col"}))
        r.status = "passed";
    else
        add_diagnosis(r, diagnose_softmax(y, x, golden_tolerance(f)));
    return r;
}

CaseResult gemm_case(const std::string& golden, bool nt) {
    SafetensorsFile f = open_golden("task2", golden);
    const Tensor a = f.load_f32("a"), b = f.load_f32(nt ? "b_nk" : "b_kn");
    const int batch = int(a.shape[0]), M = int(a.shape[1]), K = int(a.shape[2]);
    const int N = int(nt ? b.shape[1] : b.shape[2]);
    const Shape c_shape = {batch, M, N};
    CaseResult r;
    r.shape = fmt::format("batch={} M={} N={} K={}", batch, M, N, K);
    auto da = to_device(a), db = to_device(b);
    auto dc = poisoned_output(c_shape);
    r.ms = wall_ms([&] {
        (nt ? gemm_nt : gemm_nn)(da.get(), db.get(), dc.get(), batch, M, N, K);
        sync_default_stream();
    });
    Tensor c;
    if (!read_output(r, dc, c_shape, c) || !device_input_unchanged(r, "A", a, da) || !device_input_unchanged(r, "B", b, db))
        return r;
    if (check_output(r, nt ? "A·Bᵀ" : "A·B", c, f.load_f32("c", c_shape), golden_tolerance(f), {"b", "m", "n"}))
        r.status = "passed";
    else
        add_diagnosis(r, diagnose_gemm(c, a, b, nt, golden_tolerance(f)));
    return r;
}

CaseResult attention_case(const std::string& golden) {
    SafetensorsFile f = open_golden("task2", golden);
    const int B = golden_int(f, "B"), S = golden_int(f, "S"), E = golden_int(f, "hidden"), H = golden_int(f, "heads");
    const bool causal = golden_int(f, "causal") != 0;
    const Shape bse = {B, S, E}, ee = {E, E};
    const Tensor x = f.load_f32("x", bse);
    const Tensor q = linear_nt(x, f.load_f32("w_q", ee)), k = linear_nt(x, f.load_f32("w_k", ee)),
                 v = linear_nt(x, f.load_f32("w_v", ee));
    CaseResult r;
    r.shape = fmt::format("B={} S={} hidden={} heads={}{}", B, S, E, H, causal ? " causal" : "");
    auto dq = to_device(q), dk = to_device(k), dv = to_device(v);
    auto dout = poisoned_output(bse);
    r.ms = wall_ms([&] {
        custom_attention(dq.get(), dk.get(), dv.get(), dout.get(), B, S, E, H, causal);
        sync_default_stream();
    });
    Tensor attn;
    if (!read_output(r, dout, bse, attn) || !device_input_unchanged(r, "q", q, dq) ||
        !device_input_unchanged(r, "k", k, dk) || !device_input_unchanged(r, "v", v, dv))
        return r;
    const Tolerance tol = golden_tolerance(f);
    if (!check_output(r, "attention (before the output projection)", attn, f.load_f32("attn", bse), tol, {"b", "s", "e"})) {
        add_diagnosis(r, diagnose_attention_bse(attn, q, k, v, H, causal, tol));
        return r;
    }
    if (check_output(r, "output", linear_nt(attn, f.load_f32("w_o", ee)), f.load_f32("out", bse), tol, {"b", "s", "e"}))
        r.status = "passed";
    return r;
}

// Fresh inputs from GRADER_SEED, checked against double-precision CPU results; each runs two calls
// on the same device buffers with different values (a cached result fails the second).
Tensor softmax_f64(const Tensor& x) {
    Tensor y(x.shape);
    const int64_t cols = x.shape.back(), rows = x.size() / cols;
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = x.ptr() + r * cols;
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, double(in[c]));
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(double(in[c]) - mx);
        for (int64_t c = 0; c < cols; ++c) y.data[size_t(r * cols + c)] = float(std::exp(double(in[c]) - mx) / sum);
    }
    return y;
}

Tensor gemm_f64(const Tensor& a, const Tensor& b, bool nt) {  // a [batch, M, K]; b [batch, N, K] or [batch, K, N]
    const int64_t batch = a.shape[0], M = a.shape[1], K = a.shape[2], N = nt ? b.shape[1] : b.shape[2];
    Tensor c({batch, M, N});
    for (int64_t z = 0; z < batch; ++z)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (int64_t k = 0; k < K; ++k)
                    acc += double(a.data[size_t((z * M + m) * K + k)]) *
                           b.data[size_t(nt ? (z * N + n) * K + k : (z * K + k) * N + n)];
                c.data[size_t((z * M + m) * N + n)] = float(acc);
            }
    return c;
}

CaseResult fresh_softmax(int draw) {
    auto g = rng_for("task2.fresh.softmax." + std::to_string(draw));
    const int rows = uniform_int(g, 1, 50), cols = pick(g, std::vector<int>{1, 3, 100, 1000, 4096, 5000});
    CaseResult r;
    r.shape = fmt::format("{} rows × {} cols (seed {})", rows, cols, grader_seed());
    Tensor x({rows, cols});
    DeviceBuffer<float> dx(size_t(x.size())), dy(size_t(x.size()));
    for (int call = 1; call <= 2; ++call) {
        refill(g, x, 8.0f);
        upload(dx, x);
        dy.poison();
        softmax_batched(dx.get(), dy.get(), rows, cols);
        Tensor y;
        if (!read_output(r, dy, x.shape, y) || !device_input_unchanged(r, "in", x, dx)) return r;
        if (!check_output(r, fmt::format("call {} of 2", call), y, softmax_f64(x), Tolerance{1e-6, 1e-4}, {"row", "col"})) {
            add_diagnosis(r, diagnose_softmax(y, x, Tolerance{1e-6, 1e-4}));
            return r;
        }
    }
    r.status = "passed";
    return r;
}

CaseResult fresh_gemm(int draw) {
    auto g = rng_for("task2.fresh.gemm." + std::to_string(draw));
    const int batch = uniform_int(g, 1, 3), M = uniform_int(g, 1, 300), N = uniform_int(g, 1, 300), K = uniform_int(g, 1, 300);
    CaseResult r;
    r.shape = fmt::format("batch={} M={} N={} K={}, A·Bᵀ and A·B (seed {})", batch, M, N, K, grader_seed());
    Tensor a({batch, M, K}), b_nk({batch, N, K}), b_kn({batch, K, N});
    DeviceBuffer<float> da(size_t(a.size())), db(size_t(b_nk.size())), dc(size_t(batch) * M * N);
    const Tolerance tol{2e-5 * std::sqrt(double(K)), 1e-4};
    for (int call = 1; call <= 2; ++call) {
        for (bool nt : {true, false}) {
            Tensor& b = nt ? b_nk : b_kn;
            refill(g, a), refill(g, b);
            upload(da, a), upload(db, b);
            dc.poison();
            (nt ? gemm_nt : gemm_nn)(da.get(), db.get(), dc.get(), batch, M, N, K);
            Tensor c;
            if (!read_output(r, dc, {batch, M, N}, c) || !device_input_unchanged(r, "A", a, da) ||
                !device_input_unchanged(r, "B", b, db))
                return r;
            if (!check_output(r, fmt::format("{} call {} of 2", nt ? "A·Bᵀ" : "A·B", call), c, gemm_f64(a, b, nt), tol,
                              {"b", "m", "n"})) {
                add_diagnosis(r, diagnose_gemm(c, a, b, nt, tol));
                return r;
            }
        }
    }
    r.status = "passed";
    return r;
}

// Attention over [B, S, hidden] split into H heads, against double precision: `calls` calls on the same buffers.
CaseResult attention_shape_case(std::mt19937_64& g, int B, int S, int H, int D, bool causal, int calls, const std::string& note,
                                 float peak = 1.0f) {
    const int E = H * D;
    const Shape bse = {B, S, E};
    CaseResult r;
    r.shape = fmt::format("B={} S={} hidden={} heads={}{} ({})", B, S, E, H, causal ? " causal" : "", note);
    Tensor q(bse), k(bse), v(bse);
    DeviceBuffer<float> dq(size_t(q.size())), dk(size_t(q.size())), dv(size_t(q.size())), dout(size_t(q.size()));
    // peaky draws: the tolerance × peak², as Task 4's (docs/perf.md, "Peaky inputs")
    const Tolerance tol = scaled_for_peak(Tolerance{2e-5, 1e-4}, peak);
    for (int call = 1; call <= calls; ++call) {
        refill(g, q, peak), refill(g, k, peak), refill(g, v);
        upload(dq, q), upload(dk, k), upload(dv, v);
        dout.poison();
        custom_attention(dq.get(), dk.get(), dv.get(), dout.get(), B, S, E, H, causal);
        Tensor out;
        if (!read_output(r, dout, bse, out) || !device_input_unchanged(r, "q", q, dq) ||
            !device_input_unchanged(r, "k", k, dk) || !device_input_unchanged(r, "v", v, dv))
            return r;
        const Tensor want = from_heads(attention_f64(to_heads(q, H), to_heads(k, H), to_heads(v, H), causal));
        if (!check_output(r, fmt::format("call {} of {}", call, calls), out, want, tol, {"b", "s", "e"})) {
            add_diagnosis(r, diagnose_attention_bse(out, q, k, v, H, causal, tol));
            return r;
        }
    }
    r.status = "passed";
    return r;
}

CaseResult fresh_attention(int draw) {
    auto g = rng_for("task2.fresh.attention." + std::to_string(draw));
    const int B = uniform_int(g, 1, 3), S = uniform_int(g, 1, 150), H = pick(g, std::vector<int>{1, 2, 4, 8}),
              D = pick(g, std::vector<int>{8, 16, 32});
    const float peak = peak_scale(g, 2 * draw);  // two draws: the second with peaky scores
    return attention_shape_case(g, B, S, H, D, draw % 2 == 1, 2, fmt::format("seed {}{}", grader_seed(), peak_note(peak)), peak);
}

// B·H = 70000 heads: the batched GEMMs and the mask see a batch past the grid's 65535 in y and z.
CaseResult many_heads_attention() {
    auto g = rng_for("task2.many_heads");
    return attention_shape_case(g, 70, 3, 1000, 8, true, 1, "B·H = 70000: past gridDim.y/z's 65535");
}

}  // namespace

std::vector<GradeCase> grade_cases() {
    std::vector<GradeCase> cases;
    for (const char* g : {"softmax_4x10x10", "softmax_4x1000x1000", "softmax_cols1", "softmax_cols4097",
                          "softmax_cols32768", "softmax_large_scores"})
        cases.push_back({g, 1.0, [g] { return softmax_case(g); }, "softmax"});
    cases.push_back({"softmax_cols4097 in place", 1.0, [] { return softmax_case("softmax_cols4097", true); }, "softmax"});
    for (const char* g : {"gemm_4x10x10", "gemm_4x1000x1000", "gemm_ragged_127x129x67", "gemm_ragged_1x300x5",
                          "gemm_ragged_257x33x1000"}) {
        cases.push_back({fmt::format("{} nt", g), 1.0, [g] { return gemm_case(g, true); }, "gemm"});
        cases.push_back({fmt::format("{} nn", g), 1.0, [g] { return gemm_case(g, false); }, "gemm"});
    }
    for (const char* g : {"attention_b4_s10", "attention_b4_s10_causal", "attention_b16_s100", "attention_b16_s100_causal"})
        cases.push_back({g, 1.0, [g] { return attention_case(g); }, "attention"});
    for (int draw = 0; draw < 2; ++draw) {
        cases.push_back({fmt::format("fresh softmax #{}", draw + 1), 1.0, [draw] { return fresh_softmax(draw); }, "softmax"});
        cases.push_back({fmt::format("fresh gemm #{}", draw + 1), 1.0, [draw] { return fresh_gemm(draw); }, "gemm"});
        cases.push_back({fmt::format("fresh attention #{}", draw + 1), 1.0, [draw] { return fresh_attention(draw); },
                         "attention"});
    }
    cases.push_back({"B·H = 70000 heads (past the grid's 65535)", 1.0, [] { return many_heads_attention(); }, "attention"});
    return cases;
}

}  // namespace task2
