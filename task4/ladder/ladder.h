// ladder.h — Task 4's ladder of kernels (flash_ladder.cuh), by name, for the staff benchmark.
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
};

// Every kernel of the ladder, the old plan first and the reference's design last.
std::vector<Step> steps();

}  // namespace task4_ladder
