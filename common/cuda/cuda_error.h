// cuda_error.h — the exception a failed CUDA call becomes (cuda_check.h throws it), apart from the CUDA headers: the
// CPU tasks' programs catch and forward it without needing the CUDA toolkit to build.
#pragma once
#include <stdexcept>

namespace attn {

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace attn
