// bf16_convert.cu — see bf16_convert.h.
#include "common/cuda/bf16_convert.h"

#include "common/cuda/cuda_check.h"

namespace task4::bf16_convert {
namespace {
__global__ void to_bf16_kernel(const float* x, __nv_bfloat16* y, float* rounded, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        y[i] = __float2bfloat16_rn(x[i]);
        if (rounded) rounded[i] = __bfloat162float(y[i]);
    }
}
__global__ void from_bf16_kernel(const __nv_bfloat16* y, float* x, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        x[i] = __bfloat162float(y[i]);
}
}  // namespace

void to_bf16(const float* x, __nv_bfloat16* y, float* rounded, size_t n) {
    if (n == 0) return;
    to_bf16_kernel<<<1024, 256>>>(x, y, rounded, n);
    CUDA_CHECK_LAUNCH();
}
void from_bf16(const __nv_bfloat16* y, float* x, size_t n) {
    if (n == 0) return;
    from_bf16_kernel<<<1024, 256>>>(y, x, n);
    CUDA_CHECK_LAUNCH();
}
}  // namespace task4::bf16_convert
