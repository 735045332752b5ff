// cublas_gemm.cpp — see cublas_gemm.h. Row-major C = A·op(B) is column-major Cᵀ = op(B)ᵀ·Aᵀ, so
// the operands are passed swapped.
#include "common/cuda/cublas_gemm.h"

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

void CublasGemm::nt(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    check(cublasSgemmStridedBatched(h_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, K, (long long)N * K, A, K,
                                    (long long)M * K, &beta, C, N, (long long)M * N, batch),
          "SgemmStridedBatched (NT)");
}

void CublasGemm::nn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    check(cublasSgemmStridedBatched(h_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, (long long)K * N, A, K,
                                    (long long)M * K, &beta, C, N, (long long)M * N, batch),
          "SgemmStridedBatched (NN)");
}

}  // namespace attn
