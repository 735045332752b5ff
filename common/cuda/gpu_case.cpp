// gpu_case.cpp — see gpu_case.h.
#include "common/cuda/gpu_case.h"

#include "common/check.h"

#include <cstring>

namespace attn {

DeviceBuffer<float> to_device(const Tensor& t) { return DeviceBuffer<float>(t.data); }

Tensor to_host(const DeviceBuffer<float>& d, const Shape& shape) {
    Tensor t;
    t.shape = shape;
    t.data = d.download();
    if (int64_t(t.data.size()) != numel(shape)) throw std::logic_error("to_host: buffer size does not match the shape");
    return t;
}

DeviceBuffer<float> poisoned_output(const Shape& shape) {
    DeviceBuffer<float> d(size_t(numel(shape)));
    d.poison();
    return d;
}

void sync_default_stream() { CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy)); }

bool read_output(CaseResult& r, const DeviceBuffer<float>& d, const Shape& shape, Tensor& out) {
    static cudaStream_t reader = [] {
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));  // does not wait for the default stream
        return s;
    }();
    sync_default_stream();
    out = Tensor(shape);
    CUDA_CHECK(cudaMemcpyAsync(out.ptr(), d.get(), d.bytes(), cudaMemcpyDeviceToHost, reader));
    CUDA_CHECK(cudaStreamSynchronize(reader));
    CUDA_CHECK(cudaDeviceSynchronize());
    const Tensor later = to_host(d, shape);
    if (std::memcmp(later.ptr(), out.ptr(), d.bytes()) == 0) return true;
    r.status = "failed";
    r.reason = "the output changed after the default stream had finished: work is still running on another stream "
               "(launch on the default stream, or synchronise before returning)";
    return false;
}

void upload(DeviceBuffer<float>& d, const Tensor& t) { d.upload(t.data); }

bool device_input_unchanged(CaseResult& r, const std::string& name, const Tensor& original, const DeviceBuffer<float>& d) {
    return inputs_unchanged(r, name, original, to_host(d, original.shape));
}

}  // namespace attn
