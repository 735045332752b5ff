// cuda_check.cpp — see cuda_check.h.
#include "common/cuda/cuda_check.h"

#include <atomic>

namespace attn {
namespace {
std::atomic<bool> g_poisoned{false};

bool is_sticky(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorMisalignedAddress:
        case cudaErrorIllegalInstruction:
        case cudaErrorInvalidPc:
        case cudaErrorHardwareStackError:
        case cudaErrorAssert:
        case cudaErrorLaunchTimeout:
        case cudaErrorUnknown: return true;
        default: return false;
    }
}
}  // namespace

bool cuda_context_poisoned() { return g_poisoned.load(); }

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
    if (is_sticky(err)) g_poisoned = true;
    throw CudaError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in " + expr +
                    " at " + file + ":" + std::to_string(line));
}

}  // namespace attn
