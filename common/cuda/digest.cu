// digest.cu — see digest.h. Built into runners (fingerprinting timed outputs) and trusted programs
// (fingerprinting oracle outputs):  nvcc -c common/cuda/digest.cu (the Makefile does it).
#include <cmath>

#include "common/cuda/cuda_check.h"
#include "common/cuda/digest.h"

namespace attn {
namespace {

__global__ void digest_kernel(const float* p, size_t n, double* out) {
    double s = 0, s2 = 0, bad = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float x = p[i];
        if (isfinite(x)) s += x, s2 += double(x) * x;
        else bad += 1;
    }
    for (int o = 16; o > 0; o /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        s2 += __shfl_down_sync(0xffffffffu, s2, o);
        bad += __shfl_down_sync(0xffffffffu, bad, o);
    }
    if (threadIdx.x % 32 == 0) atomicAdd(out, s), atomicAdd(out + 1, s2), atomicAdd(out + 2, bad);
}

}  // namespace

void digest_into(const float* d, size_t n, double* slot) {
    digest_kernel<<<unsigned(n / 1024 + 1 < 4096 ? n / 1024 + 1 : 4096), 256>>>(d, n, slot);
    CUDA_CHECK_LAUNCH();
}

Digest digest(const float* d, size_t n) {
    double* acc = nullptr;
    CUDA_CHECK(cudaMalloc(&acc, 3 * sizeof(double)));
    CUDA_CHECK(cudaMemset(acc, 0, 3 * sizeof(double)));
    digest_into(d, n, acc);
    double h[3];
    CUDA_CHECK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(acc));
    return {h[0], h[1], h[2]};
}

bool digests_agree(const Digest& got, const Digest& want, size_t n) {
    // Each element may differ by ~1e-4 relative: the sums by that much of the sum of magnitudes.
    const double rms = std::sqrt(want.sumsq / double(n > 0 ? n : 1));
    return got.nonfinite == 0 && std::fabs(got.sum - want.sum) <= 1e-4 * rms * double(n) + 1e-3 &&
           std::fabs(got.sumsq - want.sumsq) <= 1e-3 * want.sumsq + 1e-3;
}

}  // namespace attn
