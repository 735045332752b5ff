// timed_calls.cpp — see timed_calls.h.
#include "common/cuda/timed_calls.h"

#include "common/cuda/device.h"
#include "common/cuda/digest.h"

namespace attn {

nlohmann::json timed_calls(int warmup, int reps, const float* out, size_t out_n, const std::function<void(int)>& prepare,
                           const std::function<void()>& call) {
    DeviceBuffer<char> flush(2 * device_info().l2_bytes);
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    nlohmann::json ms = nlohmann::json::array(), digests = nlohmann::json::array();
    for (int i = 0; i < warmup + reps; ++i) {
        prepare(i);
        CUDA_CHECK(cudaMemsetAsync(flush.get(), i & 0xFF, flush.bytes(), cudaStreamLegacy));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(start, cudaStreamLegacy));
        call();
        CUDA_CHECK(cudaDeviceSynchronize());  // work left on any stream is inside the time
        CUDA_CHECK(cudaEventRecord(stop, cudaStreamLegacy));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        if (i < warmup) continue;
        const Digest d = digest(out, out_n);
        ms.push_back(double(t));
        digests.push_back({d.sum, d.sumsq, d.nonfinite});
    }
    cudaEventDestroy(start), cudaEventDestroy(stop);
    return {{"ms", ms}, {"digests", digests}};
}

}  // namespace attn
