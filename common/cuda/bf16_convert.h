// bf16_convert.h — device-side float ↔ bf16 conversions for the harness (the bf16 parts' benchmarks and oracles, Task
// 6's serving model, 5b's timed calls).
#pragma once
#include <cuda_bf16.h>

#include <cstddef>

namespace task4::bf16_convert {
// n floats → bf16 (round to nearest even); `rounded` (may be null) gets the bf16 values back as floats
void to_bf16(const float* x, __nv_bfloat16* y, float* rounded, size_t n);
void from_bf16(const __nv_bfloat16* y, float* x, size_t n);
}  // namespace task4::bf16_convert
