// digest.cu — see digest.h. Built into runners (fingerprinting timed outputs) and trusted programs
// (fingerprinting oracle outputs):  nvcc -c common/cuda/digest.cu (the Makefile does it).
#include <cmath>

#include "common/cuda/cuda_check.h"
#include "common/cuda/digest.h"

namespace attn {
namespace {

constexpr int kThreads = 256;

// 32 sign bits for element i: splitmix64 of (seed, i), so that every element's signs are independent.
__device__ __forceinline__ uint32_t sign_bits(uint64_t seed, uint64_t i) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return uint32_t((z ^ (z >> 31)) >> 16);
}

// Each thread sums its elements in double; a block reduces through shared memory and adds its kDigestSlots sums
// into out with one atomic each.
__global__ void __launch_bounds__(kThreads) digest_kernel(const float* p, size_t n, uint64_t seed, double* out) {
    static_assert(kProjections == 32, "one 32-bit hash gives the signs of every projection");
    double acc[kDigestSlots] = {};
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float x = p[i];
        if (!isfinite(x)) {
            acc[2] += 1;
            continue;
        }
        const double xd = x;
        acc[0] += xd, acc[1] += xd * xd, acc[3] += fabs(xd);
        const uint32_t bits = sign_bits(seed, i);
#pragma unroll
        for (int k = 0; k < kProjections; ++k) acc[4 + k] += (bits >> k & 1u) ? xd : -xd;
    }
    __shared__ double part[kThreads / 32][kDigestSlots];
#pragma unroll
    for (int s = 0; s < kDigestSlots; ++s) {
        double v = acc[s];
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x % 32 == 0) part[threadIdx.x / 32][s] = v;
    }
    __syncthreads();
    if (threadIdx.x < kDigestSlots) {
        double v = 0;
        for (int w = 0; w < kThreads / 32; ++w) v += part[w][threadIdx.x];
        atomicAdd(out + threadIdx.x, v);
    }
}

}  // namespace

void digest_into(const float* d, size_t n, uint64_t sign_seed, double* slot) {
    const size_t blocks = n / (8 * size_t(kThreads)) + 1;
    digest_kernel<<<unsigned(blocks < 1024 ? blocks : 1024), kThreads>>>(d, n, sign_seed, slot);
    CUDA_CHECK_LAUNCH();
}

Digest digest_from_slots(const double* s) {
    Digest d;
    d.sum = s[0], d.sumsq = s[1], d.nonfinite = s[2], d.sumabs = s[3];
    for (int k = 0; k < kProjections; ++k) d.proj[k] = s[4 + k];
    return d;
}

Digest digest(const float* d, size_t n, uint64_t sign_seed) {
    double* acc = nullptr;
    CUDA_CHECK(cudaMalloc(&acc, kDigestSlots * sizeof(double)));
    CUDA_CHECK(cudaMemset(acc, 0, kDigestSlots * sizeof(double)));
    digest_into(d, n, sign_seed, acc);
    double h[kDigestSlots];
    CUDA_CHECK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(acc));
    return digest_from_slots(h);
}

// ‖got − want‖² estimated: the mean of the projections' squared differences (digest.h).
static double estimated_error2(const Digest& got, const Digest& want) {
    double err2 = 0;
    for (int k = 0; k < kProjections; ++k) err2 += (got.proj[k] - want.proj[k]) * (got.proj[k] - want.proj[k]);
    return err2 / kProjections;
}

double digest_error_ratio(const Digest& got, const Digest& want, size_t n, Tolerance tol) {
    const double err2 = estimated_error2(got, want);
    // Σ (atol + rtol·|w|)² = n·atol² + 2·atol·rtol·Σ|w| + rtol²·Σw²
    const double tol2 = double(n) * tol.atol * tol.atol + 2 * tol.atol * tol.rtol * want.sumabs + tol.rtol * tol.rtol * want.sumsq;
    return tol2 > 0 ? std::sqrt(err2 / tol2) : (err2 > 0 ? INFINITY : 0.0);
}

double digest_relative_error(const Digest& got, const Digest& want) {
    const double err2 = estimated_error2(got, want);
    return want.sumsq > 0 ? std::sqrt(err2 / want.sumsq) : (err2 > 0 ? INFINITY : 0.0);
}

bool digests_agree(const Digest& got, const Digest& want, size_t n, Tolerance tol, double allowance) {
    return got.nonfinite == 0 && digest_error_ratio(got, want, n, tol) <= allowance;
}

}  // namespace attn
