// cublas_gemm.cpp — see cublas_gemm.h.
#include "common/cuda/cublas_gemm.h"

#include <algorithm>

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"

namespace attn {
namespace {
void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw CudaError(std::string("cuBLAS error ") + std::to_string(int(s)) + " in " + what);
}
}  // namespace

CublasGemm::CublasGemm() {
    check(cublasCreate(&h_), "cublasCreate");
    check(cublasSetMathMode(h_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");  // true fp32, no TF32
}

CublasGemm::~CublasGemm() {
    if (h_) cublasDestroy(h_);
}

constexpr int kMaxBatch = 65535;

// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: B first. A row-major [R, C] matrix is a column-major
// [C, R] one with leading dimension C, so an operand not transposed in row-major terms is not transposed here either.
void CublasGemm::batched(bool trans_a, bool trans_b, const float* A, const float* B, float* C, int batch, int M, int N, int K,
                         float alpha, float beta, const char* what) {
    for (int b0 = 0; b0 < batch; b0 += kMaxBatch)  // in parts: a batch of B·H heads may pass the grid's 65535
        check(cublasSgemmStridedBatched(h_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha,
                                        B + size_t(b0) * N * K, trans_b ? K : N, (long long)N * K, A + size_t(b0) * M * K,
                                        trans_a ? M : K, (long long)M * K, &beta, C + size_t(b0) * M * N, N, (long long)M * N,
                                        std::min(batch - b0, kMaxBatch)),
              what);
}

void CublasGemm::nt(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    batched(false, true, A, B, C, batch, M, N, K, alpha, beta, "SgemmStridedBatched (NT)");
}

void CublasGemm::nn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    batched(false, false, A, B, C, batch, M, N, K, alpha, beta, "SgemmStridedBatched (NN)");
}

void CublasGemm::tn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    batched(true, false, A, B, C, batch, M, N, K, alpha, beta, "SgemmStridedBatched (TN)");
}

}  // namespace attn
