// compare.cpp — see compare.h.
#include "compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "todo.h"

namespace attn {
namespace {

constexpr int kShown = 5;  // mismatches printed in full

}  // namespace

bool is_constant(const float* v, int64_t n) {
    for (int64_t i = 1; i < n; ++i)
        if (v[i] != v[0]) return false;
    return true;
}

CompareResult compare(const float* got, const Tensor& want, Tolerance tol, const std::vector<std::string>& dims) {
    CompareResult r;
    const int64_t n = want.size();
    const float* w = want.ptr();
    int64_t first_nonfinite = -1;

    for (int64_t i = 0; i < n; ++i) {
        const double g = got[i], e = w[i];
        if (!std::isfinite(g)) {
            if (r.nonfinite++ == 0) first_nonfinite = i;
            if (r.mismatches++ < kShown)
                r.detail += fmt::format("  {} got {} want {:.6g}\n", index_str(want.shape, i, dims), g, e);
            continue;
        }
        const double err = std::fabs(g - e), allowed = tol.atol + tol.rtol * std::fabs(e);
        r.max_abs = std::max(r.max_abs, err);
        r.max_rel = std::max(r.max_rel, err / std::max(std::fabs(e), 1e-30));
        r.tol_share = std::max(r.tol_share, err / allowed);
        if (err > allowed && r.mismatches++ < kShown)
            r.detail += fmt::format("  {} got {:.6g} want {:.6g} (|diff| {:.3g} > allowed {:.3g})\n",
                                    index_str(want.shape, i, dims), g, e, err, allowed);
    }

    uint32_t bits0 = 0;
    if (n > 0) std::memcpy(&bits0, got, sizeof bits0);
    if (r.nonfinite > 0 && !(r.todo_step = kernel_todo_step(bits0)).empty()) {
        // element 0 holds the NaN of ATTNLAB_KERNEL_TODO (common/cuda/kernel_todo.cuh): still a failure,
        // named by its step
        r.reason = r.todo_step + " not implemented (the kernel is still the skeleton's stub)";
        r.detail = fmt::format("  element 0 holds the NaN that ATTNLAB_KERNEL_TODO writes; {} of {} values are NaN/Inf\n",
                               r.nonfinite, n);
        r.passed = false;
        return r;
    } else if (r.nonfinite > 0) {
        r.reason = fmt::format("{} of {} values are NaN/Inf, first at {} (outputs start as NaN: an element left unwritten, or a NaN/Inf computed)",
                               r.nonfinite, n, index_str(want.shape, first_nonfinite, dims));
    } else if (n > 1 && is_constant(got, n) && !is_constant(w, n)) {
        r.reason = got[0] == 0.0f ? "output is all zeros" : fmt::format("output is constant ({:.6g} everywhere)", got[0]);
    } else if (r.mismatches > 0) {
        r.reason = fmt::format("{} of {} elements outside atol={:g} rtol={:g}; max abs err {:.3g}, max rel err {:.3g}, "
                               "{:.1f}x the tolerance",
                               r.mismatches, n, tol.atol, tol.rtol, r.max_abs, r.max_rel, r.tol_share);
    }
    r.passed = r.reason.empty();
    if (r.mismatches > kShown) r.detail += fmt::format("  … and {} more\n", r.mismatches - kShown);
    return r;
}

}  // namespace attn
