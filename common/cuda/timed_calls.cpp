// timed_calls.cpp — see timed_calls.h.
#include "common/cuda/timed_calls.h"

#include "common/cuda/device.h"
#include "common/cuda/digest.h"
#include "common/remote/launch_log_runner.h"

namespace attn {

nlohmann::json timed_calls(int calls, uint64_t seed, const std::vector<TimedOutput>& outputs, const std::function<void(int)>& prepare,
                           const std::function<void()>& call, const std::function<void()>& after) {
    if (calls < 1 || calls > 100000) throw std::invalid_argument("timed: calls must be 1 … 100000");
    const size_t per_call = kDigestSlots * outputs.size();
    DeviceBuffer<char> flush(2 * device_info().l2_bytes);
    DeviceBuffer<double> sums(per_call * size_t(calls));
    CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, sums.bytes(), cudaStreamLegacy));
    for (int i = 0; i < calls; ++i) {
        prepare(i);
        CUDA_CHECK(cudaMemsetAsync(flush.get(), i & 0xFF, flush.bytes(), cudaStreamLegacy));
        {
            const remote::launch_log::Recording student_call;  // its launches, not the harness's (a probe's log)
            call();
        }
        if (after) after();
        for (size_t j = 0; j < outputs.size(); ++j)
            digest_into(outputs[j].data, outputs[j].n, timed_sign_seed(seed, i, int(j)),
                        sums.get() + per_call * size_t(i) + kDigestSlots * j);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<double> h = sums.download();
    nlohmann::json digests = nlohmann::json::array();
    for (int i = 0; i < calls; ++i)
        digests.push_back(std::vector<double>(h.begin() + per_call * i, h.begin() + per_call * (i + 1)));
    return {{"digests", digests}};
}

}  // namespace attn
