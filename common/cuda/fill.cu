// fill.cu — seeded random fills on the GPU (large inputs are generated where they are used,
// never shipped as files). A counter-based hash: the value at index i depends only on (seed, i).
//   Built into every CUDA binary by the Makefile; used by tests, benchmarks and model weights.
#include <cuda_bf16.h>

#include <cstdint>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"

namespace attn {
namespace {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ float unit_float(uint64_t bits) {  // in [0, 1)
    return float(bits >> 40) * (1.0f / 16777216.0f);
}

__global__ void fill_uniform_kernel(float* p, size_t n, uint64_t seed, float lo, float hi) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = lo + (hi - lo) * unit_float(splitmix64(seed * 0x632BE59BD9B4E019ull + i));
}

__device__ __forceinline__ float normal_at(uint64_t seed, size_t i, float scale) {
    const uint64_t h = splitmix64(seed * 0x632BE59BD9B4E019ull + i);
    const float u1 = fmaxf(unit_float(h), 1e-7f), u2 = float(h & 0xFFFFFF) * (1.0f / 16777216.0f);
    return scale * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__global__ void fill_normal_kernel(float* p, size_t n, uint64_t seed, float scale, size_t first) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = normal_at(seed, first + i, scale);
}

__global__ void fill_normal_bf16_kernel(__nv_bfloat16* p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = __float2bfloat16_rn(normal_at(seed, i, 1.f));
}

unsigned grid_for(size_t n) { return unsigned(n / 256 + 1 < 65536 ? n / 256 + 1 : 65536); }

}  // namespace

void fill_uniform(float* p, size_t n, uint64_t seed, float lo, float hi) {
    fill_uniform_kernel<<<grid_for(n), 256>>>(p, n, seed, lo, hi);
    CUDA_CHECK_LAUNCH();
}

void fill_normal(float* p, size_t n, uint64_t seed, float scale, size_t first) {
    fill_normal_kernel<<<grid_for(n), 256>>>(p, n, seed, scale, first);
    CUDA_CHECK_LAUNCH();
}

void fill_normal_bf16(void* p, size_t n, uint64_t seed) {
    fill_normal_bf16_kernel<<<grid_for(n), 256>>>(static_cast<__nv_bfloat16*>(p), n, seed);
    CUDA_CHECK_LAUNCH();
}

}  // namespace attn
