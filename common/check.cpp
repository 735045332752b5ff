// check.cpp — see check.h.
#include "check.h"

#include <fmt/format.h>

#include <algorithm>
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
    r.max_abs_err = std::max(r.max_abs_err, c.max_abs);
    r.tol_share = std::max(r.tol_share, c.tol_share);
    if (c.passed) return true;
    r.status = "failed";
    r.reason = what + ": " + c.reason;
    r.detail = c.detail;
    return false;
}

}  // namespace attn
