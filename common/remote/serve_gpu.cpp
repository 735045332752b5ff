// serve_gpu.cpp — device staging for a GPU task's runner: buffers of a proxied call live on the
// device for the call and are freed after it.
#include <cuda_runtime.h>

#include <optional>

#include "common/cuda/device.h"
#include "common/remote/launch_log_runner.h"
#include "common/remote/serve.h"

namespace attn::remote {
namespace {

class GpuStaging : public Staging {
public:
    float* upload(const std::vector<float>& host) override {
        float* d = alloc(host.size());
        if (!host.empty()) CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
        return d;
    }
    float* poisoned(size_t n) override {
        float* d = alloc(n);
        if (n) CUDA_CHECK(cudaMemset(d, 0xFF, n * sizeof(float)));
        return d;
    }
    void download(const float* device, std::vector<float>& host) override {
        host.resize(sizes_.at(device));
        if (!host.empty()) CUDA_CHECK(cudaMemcpy(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    }
    void sync_default_stream() override { CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy)); }
    void sync_device() override { CUDA_CHECK(cudaDeviceSynchronize()); }
    void release() override {
        for (auto& [p, n] : sizes_) cudaFree(const_cast<float*>(p));
        sizes_.clear();
    }
    void want_launch_log(bool wanted) override {
        if (!attached_) launch_log::attach_page(), attached_ = true;
        launch_log::prepare(wanted);
    }
    void record_launches(bool on) override {
        if (on) recording_.emplace();
        else recording_.reset();
    }
    bool context_poisoned() override { return cuda_context_poisoned(); }
    std::string device_name() override {
        std::string why;
        return has_cuda_device(&why) ? device_info().name : "";
    }

private:
    float* alloc(size_t n) {
        float* d = nullptr;
        CUDA_CHECK(cudaMalloc(&d, std::max<size_t>(n, 1) * sizeof(float)));
        sizes_[d] = n;
        return d;
    }
    std::map<const float*, size_t> sizes_;
    bool attached_ = false;
    std::optional<launch_log::Recording> recording_;
};

}  // namespace

Staging* staging() {
    static GpuStaging s;
    return &s;
}

}  // namespace attn::remote
