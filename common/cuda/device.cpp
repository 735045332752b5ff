// device.cpp — see device.h.
#include "common/cuda/device.h"

#include <string>

namespace attn {

bool has_cuda_device(std::string* why) {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        // The runtime's own words ("CUDA driver version is insufficient …") read like "update your driver" on a machine
        // that has no GPU at all; say what it means here.
        if (why) *why = std::string("no usable NVIDIA GPU on this machine; the CUDA runtime says: ") + cudaGetErrorString(err) +
                        " — GPU tasks run where a GPU is, as the course's grader does";
        cudaGetLastError();  // clear it: nothing else will run on the GPU anyway
        return false;
    }
    if (n == 0) {
        if (why) *why = "no NVIDIA GPU found on this machine — GPU tasks run where a GPU is, as the course's grader does";
        return false;
    }
    return true;
}

DeviceInfo device_info() {
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    DeviceInfo d;
    d.name = p.name;
    d.sms = p.multiProcessorCount;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.l2_bytes = size_t(p.l2CacheSize);
    d.global_bytes = p.totalGlobalMem;
    d.smem_per_block_optin = p.sharedMemPerBlockOptin;
    return d;
}

}  // namespace attn
