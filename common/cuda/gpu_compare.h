// gpu_compare.h — compares two device arrays on the GPU, so that benchmarks can check every timed
// call's output (gigabytes of it) without copying it back.
#pragma once
#include <cstddef>

namespace attn {

struct GpuDiff {
    double max_abs = 0;        // over finite elements
    unsigned long long outside = 0;    // elements with |got − want| > atol + rtol·|want|
    unsigned long long nonfinite = 0;  // NaN/Inf in got
    bool ok() const { return outside == 0 && nonfinite == 0; }
};

GpuDiff gpu_compare(const float* got, const float* want, size_t n, double atol, double rtol);

}  // namespace attn
