// gpu_case.cpp — see gpu_case.h.
#include "common/cuda/gpu_case.h"

#include "common/check.h"

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

void sync_device() { CUDA_CHECK(cudaDeviceSynchronize()); }

bool device_input_unchanged(CaseResult& r, const std::string& name, const Tensor& original, const DeviceBuffer<float>& d) {
    return inputs_unchanged(r, name, original, to_host(d, original.shape));
}

}  // namespace attn
