// device_copy.h — how the trusted side stages a device buffer for the runner (runner.cpp): copied to the host before a
// call, and the runner's answer copied back. Two builds: device_copy.cpp (CUDA) for every program that has GPU tasks,
// device_copy_none.cpp for the CPU tasks' programs, which build without the CUDA toolkit and never hold a device buffer.
#pragma once
#include <cstddef>

namespace attn::remote {

void copy_device_to_host(float* host, const float* device, size_t n);
void copy_host_to_device(float* device, const float* host, size_t n);

}  // namespace attn::remote
