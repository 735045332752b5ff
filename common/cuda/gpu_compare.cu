// gpu_compare.cu — see gpu_compare.h. Part of the harness: one pass, three atomics per block.
#include <cuda_runtime.h>

#include <cstring>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/gpu_compare.h"

namespace attn {
namespace {

struct Acc {
    unsigned max_bits;  // max |diff| as float bits: for non-negative floats, integer order is float order
    unsigned long long outside, nonfinite;
};

__global__ void compare_kernel(const float* got, const float* want, size_t n, float atol, float rtol, Acc* acc) {
    float local_max = 0.f;
    unsigned long long outside = 0, nonfinite = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float g = got[i], w = want[i];
        if (!isfinite(g)) {
            ++nonfinite;
            continue;
        }
        const float d = fabsf(g - w);
        local_max = fmaxf(local_max, d);
        outside += d > atol + rtol * fabsf(w);
    }
    for (int off = 16; off > 0; off >>= 1) {
        local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffff, local_max, off));
        outside += __shfl_xor_sync(0xffffffff, outside, off);
        nonfinite += __shfl_xor_sync(0xffffffff, nonfinite, off);
    }
    if (threadIdx.x % 32 == 0) {
        atomicMax(&acc->max_bits, __float_as_uint(local_max));
        if (outside) atomicAdd(&acc->outside, outside);
        if (nonfinite) atomicAdd(&acc->nonfinite, nonfinite);
    }
}

}  // namespace

GpuDiff gpu_compare(const float* got, const float* want, size_t n, double atol, double rtol) {
    DeviceBuffer<Acc> acc(1);
    CUDA_CHECK(cudaMemset(acc.get(), 0, sizeof(Acc)));
    compare_kernel<<<1024, 256>>>(got, want, n, float(atol), float(rtol), acc.get());
    CUDA_CHECK_LAUNCH();
    const Acc h = acc.download()[0];
    GpuDiff d;
    float m;
    static_assert(sizeof m == sizeof h.max_bits, "float is 32 bits");
    std::memcpy(&m, &h.max_bits, sizeof m);
    d.max_abs = m, d.outside = h.outside, d.nonfinite = h.nonfinite;
    return d;
}

}  // namespace attn
