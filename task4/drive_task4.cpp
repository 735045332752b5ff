// drive_task4.cpp — Task 4's profiling driver (common/cuda/drive.h): your flash_attention_forward called
// directly, for `make profile-task4` (Nsight Compute) and `make sanitize-task4` (compute-sanitizer).
//   profile: B=4 H=32 S=4096 D=128, non-causal (1/16 of the course's B=64: the same kernel, the same per-block work)
//   small:   S = 1, 127, 129; Sq ≠ Sk; head_dim 32/64/96/128; causal and not
#include <fmt/format.h>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/drive.h"
#include "task4/task4.h"

using namespace attn;

namespace {

void call(int B, int H, int Sq, int Sk, int D, bool causal, bool profiled) {
    const size_t nq = size_t(B) * H * Sq * D, nk = size_t(B) * H * Sk * D;
    DeviceBuffer<float> q(nq), k(nk), v(nk), o(nq);
    fill_normal(q.get(), nq, 1), fill_normal(k.get(), nk, 2), fill_normal(v.get(), nk, 3);
    const std::string what = fmt::format("flash_attention_forward B={} H={} Sq={} Sk={} D={}{}", B, H, Sq, Sk, D,
                                         causal ? " causal" : "");
    auto fn = [&] { task4::flash_attention_forward(q.get(), k.get(), v.get(), o.get(), B, H, Sq, Sk, D, causal); };
    profiled ? profile_call(what, fn) : small_call(what, fn);
}

}  // namespace

int main(int argc, char** argv) {
    return drive_main(
        "drive_task4", argc, argv, [] { call(4, 32, 4096, 4096, 128, false, true); },
        [] {
            for (int D : {32, 64, 96, 128})
                for (bool causal : {false, true})
                    for (int S : {1, 127, 129}) call(2, 3, S, S, D, causal, false);
            for (bool causal : {false, true}) {
                call(1, 2, 100, 300, 64, causal, false);
                call(1, 2, 77, 200, 128, causal, false);
            }
        });
}
