// memory_watch.cpp — see memory_watch.h.
#include "common/cuda/memory_watch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/cuda/cuda_check.h"
#include "common/remote/runner.h"

namespace attn {
namespace {

double used_bytes() {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return double(total_b - free_b);
}

}  // namespace

double device_memory_peak_during(const std::function<void()>& fn) {
    const double before = used_bytes();
    std::atomic<bool> done{false};
    std::atomic<double> peak{before};
    std::thread watcher([&] {
        while (!done.load()) {
            size_t free_b = 0, total_b = 0;
            if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
                const double used = double(total_b - free_b);
                if (used > peak.load()) peak.store(used);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    try {
        fn();
    } catch (...) {
        done = true;
        watcher.join();
        throw;
    }
    done = true;
    watcher.join();
    return std::max(0.0, peak.load() - before);
}

void wait_for_device_memory_to_settle() {
    double last = used_bytes();
    int steady = 0;
    for (int i = 0; i < 200 && steady < 4; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const double now = used_bytes();
        steady = now == last ? steady + 1 : 0;
        last = now;
    }
}

RunnerMemory runner_memory_beyond_null(const std::function<void()>& calls, const std::function<void()>& between) {
    auto watched = [&](double& host_peak) {
        remote::stop_runner();
        wait_for_device_memory_to_settle();  // the old runner's memory back before the window opens
        const double device = device_memory_peak_during(calls);
        host_peak = remote::runner_peak_rss_bytes();
        return device;
    };
    double null_device = 0, null_host = 0, host = 0;
    remote::with_null_runner([&] { null_device = watched(null_host); });
    between();
    const auto start = std::chrono::steady_clock::now();
    const double device = watched(host);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return {device - null_device, host - null_host, ms};
}

}  // namespace attn
