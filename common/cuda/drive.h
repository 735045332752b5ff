// drive.h — the frame of the profiling drivers, build/<impl>/bin/drive_taskN (taskN/drive_taskN.cpp):
// a task's functions called directly in one process (no runner, nothing judged), for Nsight Compute
// (`make profile-taskN`) and compute-sanitizer (`make sanitize-taskN`). They take no part in grading.
//
//   drive_taskN check     exit 0 where there is a CUDA device; otherwise "skipped: no CUDA device (…)", exit 77
//   drive_taskN profile   the task's representative shape: inputs from fill_normal, one warm-up call, then
//                         the profiled call inside the NVTX range "attnlab_profile" (ncu --nvtx
//                         --nvtx-include "attnlab_profile/" profiles only the kernels launched there)
//   drive_taskN small     the task's small ragged shapes, each called once and synchronised (for the sanitizers)
//
// Exit codes: 0 done, 1 the task's code threw or CUDA reported an error (one line says which call), 2 usage,
// 77 no CUDA device.
#pragma once
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <cstring>
#include <exception>
#include <functional>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/todo.h"

namespace attn {

// One call of the profiled shape: a warm-up (outside the range), then the call inside "attnlab_profile".
inline void profile_call(const std::string& what, const std::function<void()>& fn) {
    fmt::print("warm-up: {}\n", what);
    fn();
    CUDA_CHECK(cudaDeviceSynchronize());
    fmt::print("profiled: {}\n", what);
    nvtxRangePushA("attnlab_profile");
    fn();
    CUDA_CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
}

// One small call: run, synchronise, and name the call if CUDA reports an error.
inline void small_call(const std::string& what, const std::function<void()>& fn) {
    fmt::print("call: {}\n", what);
    std::fflush(stdout);
    fn();
    const cudaError_t launch = cudaGetLastError(), sync = cudaDeviceSynchronize();
    const cudaError_t e = launch != cudaSuccess ? launch : sync;
    if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: CUDA error {}: {}", what, cudaGetErrorName(e), cudaGetErrorString(e)));
}

inline int drive_main(const char* program, int argc, char** argv, const std::function<void()>& profile,
                      const std::function<void()>& small) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "check" && mode != "profile" && mode != "small") {
        fmt::print(stderr, "usage: {} check|profile|small\n", program);
        return 2;
    }
    std::string why;
    if (!has_cuda_device(&why)) {
        fmt::print("skipped: no CUDA device ({})\n", why);
        return 77;
    }
    if (mode == "check") return 0;
    try {
        (mode == "profile" ? profile : small)();
    } catch (const NotImplemented& e) {
        fmt::print(stderr, "{}: {} — nothing to {} until it is written\n", program, e.what(), mode == "profile" ? "profile" : "check");
        return 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", program, e.what());
        return 1;
    }
    fmt::print("{}: {} done\n", program, mode);
    return 0;
}

}  // namespace attn
