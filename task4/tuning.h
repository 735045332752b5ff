// tuning.h — Task 4's tile configurations: which (Br, Bc, threads) the reference kernel was
// compiled for, which one the launcher uses per head_dim (task4/tuning.json, written by
// `make tune-task4`), and a way to launch a given one (the tuner and benchmarks use it).
#pragma once
#include <string>
#include <vector>

namespace task4 {

struct FlashConfig {
    int br = 0, bc = 0, threads = 0;
    std::string str() const;  // "64x64x128"
};

// The configuration the launcher uses for head_dim d: task4/tuning.json (or $ATTNLAB_TASK4_TUNING),
// falling back to a built-in default when the file has no entry for d.
FlashConfig tuned_config(int d);

// Reference only: the compiled instances, and a launch with one of them (throws
// std::invalid_argument when (d, cfg) was not compiled).
std::vector<FlashConfig> compiled_configs(int d);
void flash_forward_with(const FlashConfig& cfg, const float* q, const float* k, const float* v, float* o, int B, int H,
                        int Sq, int Sk, int D, bool causal);

}  // namespace task4
