// phase_timer.cpp — see phase_timer.h.
#include "common/llm/phase_timer.h"

#include "common/cuda/cuda_check.h"

namespace llm {

PhaseTimer::~PhaseTimer() {
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
}

cudaEvent_t PhaseTimer::event() {
    if (used_ == pool_.size()) {
        cudaEvent_t e;
        CUDA_CHECK(cudaEventCreate(&e));
        pool_.push_back(e);
    }
    cudaEvent_t e = pool_[used_++];
    CUDA_CHECK(cudaEventRecord(e));
    return e;
}

void PhaseTimer::begin(const std::string& category) {
    end();
    marks_.push_back({category, used_});
    event();
    open_ = true;
}

void PhaseTimer::end() {
    if (!open_) return;
    event();  // the end of the open phase: the event right after its start
    open_ = false;
}

std::map<std::string, double> PhaseTimer::collect() {
    end();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::map<std::string, double> ms;
    for (const auto& [category, start] : marks_) {
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, pool_[start], pool_[start + 1]));
        ms[category] += t;
    }
    marks_.clear();
    used_ = 0;
    return ms;
}

}  // namespace llm
