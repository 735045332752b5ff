// device_copy_none.cpp — see device_copy.h: the CPU tasks' build, without CUDA. Their calls pass host buffers only.
#include <stdexcept>

#include "common/remote/device_copy.h"

namespace attn::remote {

void copy_device_to_host(float*, const float*, size_t) {
    throw std::logic_error("a device buffer in a program built without CUDA (the CPU tasks' harness)");
}

void copy_host_to_device(float*, const float*, size_t) {
    throw std::logic_error("a device buffer in a program built without CUDA (the CPU tasks' harness)");
}

}  // namespace attn::remote
