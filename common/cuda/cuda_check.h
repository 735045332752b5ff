// cuda_check.h — CUDA_CHECK around every runtime call, CUDA_CHECK_LAUNCH after every launch.
//
// A failed call throws attn::CudaError naming the expression, file, line and CUDA's message, so a
// test or graded case reports it instead of dying. Errors that leave the context unusable
// (illegal address, launch failure, …) also mark the process as poisoned: the grader then starts a
// fresh process for the next case.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "common/cuda/cuda_error.h"

namespace attn {

// True once a sticky error has been seen in this process.
bool cuda_context_poisoned();
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace attn

#define CUDA_CHECK(expr)                                                         \
    do {                                                                         \
        cudaError_t attn_err_ = (expr);                                          \
        if (attn_err_ != cudaSuccess) ::attn::throw_cuda_error(attn_err_, #expr, __FILE__, __LINE__); \
    } while (0)

// After a kernel launch: reports bad launch configurations at once (the kernel's own faults show
// up at the next synchronising call).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
