// phase_timer.h — where the time of one model step goes: CUDA events between phases, summed per
// category ("gemm", "attention", "other"). Only for a profiling step: events between every
// kernel cost a little, so timed runs leave the timer off.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

namespace llm {

class PhaseTimer {
public:
    PhaseTimer() = default;
    ~PhaseTimer();
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;
    // Closes the running phase (if any) and opens one of `category`.
    void begin(const std::string& category);
    // Closes the running phase.
    void end();
    // Waits for the device; milliseconds per category, and clears.
    std::map<std::string, double> collect();

private:
    cudaEvent_t event();
    std::vector<cudaEvent_t> pool_;
    size_t used_ = 0;
    std::vector<std::pair<std::string, size_t>> marks_;  // category, index of its start event
    bool open_ = false;
};

// Opens a phase on `t` when it is not null (the model's code calls this unconditionally).
inline void phase(PhaseTimer* t, const char* category) {
    if (t) t->begin(category);
}

}  // namespace llm
