// device_copy.cpp — see device_copy.h: the CUDA build.
#include "common/remote/device_copy.h"

#include "common/cuda/cuda_check.h"

namespace attn::remote {

void copy_device_to_host(float* host, const float* device, size_t n) {
    CUDA_CHECK(cudaMemcpy(host, device, n * sizeof(float), cudaMemcpyDeviceToHost));
}

void copy_host_to_device(float* device, const float* host, size_t n) {
    CUDA_CHECK(cudaMemcpy(device, host, n * sizeof(float), cudaMemcpyHostToDevice));
}

}  // namespace attn::remote
