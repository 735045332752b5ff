// compare.h — element-wise comparison of a result against its expected tensor.
//
// Passes when |got − want| ≤ atol + rtol·|want| everywhere. Checked separately, before the
// tolerance test: NaN/Inf values (the harness poisons outputs with NaN, so an unwritten element
// shows up here), and an all-zero or constant output where the expected one is not — those fail
// even where the tolerances would allow them. A failure explains itself: mismatch count, the first
// few mismatches with their multi-dimensional index, max abs/rel error and the share of the
// tolerance used. An output whose element 0 is the NaN a skeleton's stub kernel writes
// (ATTNLAB_KERNEL_TODO) fails as "taskN.M not implemented (the kernel is still the skeleton's stub)".
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "tensor.h"

namespace attn {

struct Tolerance {
    double atol = 1e-5;
    double rtol = 1e-4;
};

// A float32 tolerance for inputs whose q and k are scaled by `peak` (common/seed.h, peak_scale): each score's rounding
// grows with |q|·|k|, so the tolerance grows with peak². Measured (docs/perf.md, "Peaky inputs"): torch's own float32
// attention against float64 on such inputs reaches 1.7× (SDPA math, o) and 3.0× (math, dq) the unscaled tolerance.
inline Tolerance scaled_for_peak(Tolerance t, double peak) { return {t.atol * peak * peak, t.rtol * peak * peak}; }

struct CompareResult {
    bool passed = false;
    int64_t mismatches = 0;   // elements outside the tolerance (non-finite ones included)
    int64_t nonfinite = 0;    // NaN or Inf in `got`
    double max_abs = 0.0;     // over finite elements
    double max_rel = 0.0;
    double tol_share = 0.0;   // max of |got − want| / (atol + rtol·|want|); ≤ 1 passes
    std::string reason;       // one line: why it failed, empty when it passed
    std::string detail;       // the first mismatches, one per line
    std::string todo_step;    // "task2.1" when the output is the NaN of a stub kernel (common/cuda/kernel_todo.cuh)
};

// `dims` names the dimensions for the messages, e.g. {"b", "s", "d"}.
CompareResult compare(const float* got, const Tensor& want, Tolerance tol, const std::vector<std::string>& dims = {});
// The element check every comparison makes, |got − want| ≤ atol + rtol·|want| (false for NaN), and the same error in
// units of what it allows (≤ 1 passes; NaN for NaN): the diagnoses test the common mistakes' answers with them.
inline bool within(double got, double want, Tolerance tol) {
    return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}
inline double in_tolerances(double got, double want, Tolerance tol) {
    return std::fabs(got - want) / (tol.atol + tol.rtol * std::fabs(want));
}
// Every one of the n values equal to the first (an output of zeros, or of one value everywhere).
bool is_constant(const float* v, int64_t n);

}  // namespace attn
