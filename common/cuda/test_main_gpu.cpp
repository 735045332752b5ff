// test_main_gpu.cpp — Catch2's main for the CUDA tasks' test binaries. Without a usable GPU it
// prints "skipped: no CUDA device (…)" and exits 77, the conventional "skipped" code, so that no
// GPU test is ever counted as passed on a machine that could not run it. The reporter is attnlab's
// (common/catch_reporter.h), as in common/test_main.cpp.
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_DEFAULT_REPORTER "attnlab"
#include <catch2/catch.hpp>

#include "common/catch_reporter.h"
#include <fmt/format.h>

#include "common/cuda/device.h"

int main(int argc, char** argv) {
    std::string why;
    if (!attn::has_cuda_device(&why)) {
        fmt::print("skipped: no CUDA device ({})\n", why);
        return 77;
    }
    const attn::DeviceInfo d = attn::device_info();
    fmt::print("GPU: {} (sm_{}{}, {} SMs, {} MB L2)\n", d.name, d.cc_major, d.cc_minor, d.sms, d.l2_bytes >> 20);
    return Catch::Session().run(argc, argv);
}
