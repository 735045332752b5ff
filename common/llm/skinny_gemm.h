// skinny_gemm.h — y = x·Wᵀ + beta·y for a few rows of x (a decode step: one token per sequence),
// streaming W once at close to the memory bandwidth. cuBLAS's fp32 GEMM reaches about 63 % of the
// copy bandwidth at M = 4 on an H200 (docs/perf.md); this kernel is the model code's decode path.
#pragma once

namespace attn {
class CublasGemm;
}

namespace llm {

constexpr int kSkinnyMaxRows = 8;

// x [T, K], W [N, K] (a Linear's weight), y [T, N], row-major, device pointers. Returns false
// (launching nothing) when it does not apply: T > kSkinnyMaxRows, K % 4 ≠ 0, or a pointer not
// 16-byte aligned — the caller then uses cuBLAS.
bool skinny_gemm_nt(const float* x, const float* W, float* y, int T, int N, int K, float beta);

// The longest K the skinny kernel takes in linear_nt (longer rows go to cuBLAS, which streams them
// better: docs/perf.md). bench_task6 --skinny-max-k compares.
void set_skinny_max_k(int k);

// A Linear layer without bias, y = x·Wᵀ + beta·y: the skinny kernel where it applies, else cuBLAS.
void linear_nt(attn::CublasGemm& gemm, const float* x, const float* W, float* y, int T, int N, int K, float beta = 0.f);

}  // namespace llm
