// ladder.h — Task 4's ladder of kernels (flash_ladder.cuh, flash_tf32.cuh), by name, for the staff benchmark.
#pragma once
#include <string>
#include <vector>

namespace task4_ladder {

using Forward = void (*)(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk, int D,
                         bool causal);

struct Step {
    std::string name;    // e.g. "plan"
    std::string change;  // what it changes over the step before, in a few words
    Forward forward;
    bool tensor_cores = false;  // the 3xTF32 rungs (flash_tf32.cuh): the benchmark's --top times only these
};

// Every kernel of the ladder, the old plan first, then the reference's design, then the 3xTF32 rungs: the
// top rung ("3xTF32") and the tile configurations it was chosen from.
std::vector<Step> steps();

// A kernel's output against attention in float64 on the same inputs (accuracy_f64.cuh): heads h0 … h0+nh−1
// of [BH, S, D] device tensors, every row (stride 1) or every stride-th.
struct ErrorStats {
    double max_abs = 0, rel_l2 = 0;  // max |got − want|, ‖got − want‖ / ‖want‖
};
ErrorStats error_vs_f64(const float* q, const float* k, const float* v, const float* o, int Sq, int Sk, int D, bool causal,
                        int h0, int nh, int stride);

}  // namespace task4_ladder
