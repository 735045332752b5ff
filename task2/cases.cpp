// cases.cpp — Task 2's graded cases, on the GPU, against goldens/task2: softmax over short, long
// and ragged rows (and scores large enough to overflow exp() without the max subtraction); both
// GEMMs on square, large and ragged shapes; the whole attention against
// torch.nn.MultiheadAttention.
#include "task2/cases.h"

#include <fmt/format.h>

#include "common/check.h"
#include "common/cpu_ops.h"
#include "common/cuda/gpu_case.h"
#include "common/golden.h"
#include "task2/task2.h"

namespace task2 {
namespace {

using namespace attn;

CaseResult softmax_case(const std::string& golden) {
    SafetensorsFile f = open_golden("task2", golden);
    const Tensor x = f.load_f32("x");
    const int cols = int(x.shape.back()), rows = int(x.size() / cols);
    CaseResult r;
    r.shape = fmt::format("{} rows × {} cols", rows, cols);
    auto dx = to_device(x);
    auto dy = poisoned_output(x.shape);
    r.ms = wall_ms([&] {
        softmax_batched(dx.get(), dy.get(), rows, cols);
        sync_device();
    });
    if (!device_input_unchanged(r, "in", x, dx)) return r;
    if (check_output(r, "softmax", to_host(dy, x.shape), f.load_f32("y", x.shape), golden_tolerance(f), {"row", "col"}))
        r.status = "passed";
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
        sync_device();
    });
    if (!device_input_unchanged(r, "A", a, da) || !device_input_unchanged(r, "B", b, db)) return r;
    if (check_output(r, nt ? "A·Bᵀ" : "A·B", to_host(dc, c_shape), f.load_f32("c", c_shape), golden_tolerance(f),
                     {"b", "m", "n"}))
        r.status = "passed";
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
        sync_device();
    });
    if (!device_input_unchanged(r, "q", q, dq) || !device_input_unchanged(r, "k", k, dk) ||
        !device_input_unchanged(r, "v", v, dv))
        return r;
    const Tensor attn = to_host(dout, bse);
    const Tolerance tol = golden_tolerance(f);
    if (!check_output(r, "attention (before the output projection)", attn, f.load_f32("attn", bse), tol, {"b", "s", "e"}))
        return r;
    if (check_output(r, "output", linear_nt(attn, f.load_f32("w_o", ee)), f.load_f32("out", bse), tol, {"b", "s", "e"}))
        r.status = "passed";
    return r;
}

}  // namespace

std::vector<GradeCase> grade_cases() {
    std::vector<GradeCase> cases;
    for (const char* g : {"softmax_4x10x10", "softmax_4x1000x1000", "softmax_cols1", "softmax_cols4097",
                          "softmax_cols32768", "softmax_large_scores"})
        cases.push_back({g, 1.0, [g] { return softmax_case(g); }, "softmax"});
    for (const char* g : {"gemm_4x10x10", "gemm_4x1000x1000", "gemm_ragged_127x129x67", "gemm_ragged_1x300x5",
                          "gemm_ragged_257x33x1000"}) {
        cases.push_back({fmt::format("{} nt", g), 1.0, [g] { return gemm_case(g, true); }, "gemm"});
        cases.push_back({fmt::format("{} nn", g), 1.0, [g] { return gemm_case(g, false); }, "gemm"});
    }
    for (const char* g : {"attention_b4_s10", "attention_b4_s10_causal", "attention_b16_s100", "attention_b16_s100_causal"})
        cases.push_back({g, 1.0, [g] { return attention_case(g); }, "attention"});
    return cases;
}

}  // namespace task2
