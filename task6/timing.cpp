// timing.cpp — see timing.h.
#include "task6/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/cuda/cuda_check.h"

namespace task6 {
namespace {

struct Events {
    std::vector<cudaEvent_t> e;
    explicit Events(size_t n) : e(n) {
        for (auto& x : e) CUDA_CHECK(cudaEventCreate(&x));
    }
    ~Events() {
        for (auto& x : e) cudaEventDestroy(x);
    }
    double ms(size_t a, size_t b) const {
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, e[a], e[b]));
        return t;
    }
};

}  // namespace

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

double GenerationTiming::tbt_median() const { return percentile(tbt_ms, 0.5); }
double GenerationTiming::tbt_p90() const { return percentile(tbt_ms, 0.9); }
double GenerationTiming::tbt_total() const { return std::accumulate(tbt_ms.begin(), tbt_ms.end(), 0.0); }

GenerationTiming time_generation(DecoderModel& m, const std::vector<int>& prompt, int S, int steps) {
    Events ev(size_t(steps) + 2);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(ev.e[0]));
    m.prefill(prompt, S);
    CUDA_CHECK(cudaEventRecord(ev.e[1]));
    for (int step = 0; step < steps; ++step) {
        m.decode();
        CUDA_CHECK(cudaEventRecord(ev.e[size_t(step) + 2]));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    GenerationTiming t;
    t.ttft_ms = ev.ms(0, 1);
    for (int step = 0; step < steps; ++step) t.tbt_ms.push_back(ev.ms(size_t(step) + 1, size_t(step) + 2));
    return t;
}

double median_step_ms(DecoderModel& m, int steps) {
    Events ev(2);
    std::vector<double> ms;
    for (int i = 0; i < steps; ++i) {
        CUDA_CHECK(cudaEventRecord(ev.e[0]));
        m.decode();
        CUDA_CHECK(cudaEventRecord(ev.e[1]));
        CUDA_CHECK(cudaEventSynchronize(ev.e[1]));
        ms.push_back(ev.ms(0, 1));
    }
    return percentile(ms, 0.5);
}

ModelConfig fit_layers(ModelConfig cfg, size_t runs_bytes, size_t free_bytes, std::string& note) {
    const int full = cfg.layers;
    const size_t margin = size_t(1) << 30;  // cuBLAS workspaces, the context, fragmentation
    while (cfg.layers > 1 && cfg.weight_bytes() + runs_bytes * size_t(cfg.layers) / size_t(full) + margin > free_bytes)
        --cfg.layers;
    note = cfg.layers < full ? fmt::format("layers cut from {} to {}: the GPU has {:.1f} GB free, the full model needs {:.1f} GB",
                                           full, cfg.layers, free_bytes / 1e9,
                                           (ModelConfig(cfg).weight_bytes() * full / cfg.layers + runs_bytes + margin) / 1e9)
                             : "";
    return cfg;
}

}  // namespace task6
