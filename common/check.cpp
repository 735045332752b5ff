// check.cpp — see check.h.
#include "check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attn {

void poison(Tensor& t) { std::fill(t.data.begin(), t.data.end(), std::numeric_limits<float>::quiet_NaN()); }

bool inputs_unchanged(CaseResult& r, const std::string& name, const Tensor& before, const Tensor& now) {
    if (before.data.size() == now.data.size() &&
        std::memcmp(before.ptr(), now.ptr(), before.data.size() * sizeof(float)) == 0)
        return true;
    r.status = "failed";
    r.reason = fmt::format("input '{}' was modified by the call (inputs are read-only)", name);
    return false;
}

bool check_output(CaseResult& r, const std::string& what, const Tensor& got, const Tensor& want, Tolerance tol,
                  const std::vector<std::string>& dims) {
    if (got.shape != want.shape) {
        r.status = "error";
        r.reason = fmt::format("{}: harness shape {} vs golden {}", what, shape_str(got.shape), shape_str(want.shape));
        return false;
    }
    CompareResult c = compare(got.ptr(), want, tol, dims);
    r.max_abs_err = std::max(r.max_abs_err, c.max_abs);  // over the finite elements
    r.tol_share = std::max(r.tol_share, c.tol_share);
    r.nonfinite_output = r.nonfinite_output || c.nonfinite > 0;
    if (c.passed) return true;
    r.status = "failed";
    r.reason = c.todo_step.empty() ? what + ": " + c.reason : c.reason;  // "task2.1 not implemented (…)" as it is
    r.detail = c.detail;
    return false;
}

bool timing_agrees(CaseResult& r, const std::string& what, double reported_ms, double bracket_ms, double min_share) {
    if (reported_ms <= bracket_ms * 1.02 + 0.5 && reported_ms >= min_share * bracket_ms && reported_ms >= 0) return true;
    r.status = "failed";
    r.reason = fmt::format("{}: the runner reported {:.3f} ms, but this side's clock measured {:.3f} ms around the request: "
                           "a time that does not agree with the grader's clock is not credited",
                           what, reported_ms, bracket_ms);
    return false;
}

bool check_lse(CaseResult& r, const std::string& what, const Tensor& got, const Tensor& want, Tolerance tol) {
    Tensor g = got, w = want;
    for (size_t i = 0; i < w.data.size(); ++i) {
        if (!(std::isinf(w.data[i]) && w.data[i] > 0)) continue;
        if (!(std::isinf(g.data[i]) && g.data[i] > 0)) {
            r.status = "failed";
            r.reason = fmt::format("{}: lse{} is {} but that row sees no key: it must be +inf (so that exp(s − lse) = 0)",
                                   what, index_str(w.shape, int64_t(i), {"b", "h", "s"}), g.data[i]);
            return false;
        }
        g.data[i] = w.data[i] = 0.0f;
    }
    return check_output(r, what, g, w, tol, {"b", "h", "s"});
}

void add_diagnosis(CaseResult& r, const std::string& diagnosis) {
    if (!diagnosis.empty()) r.reason += "; " + diagnosis;
}

}  // namespace attn
