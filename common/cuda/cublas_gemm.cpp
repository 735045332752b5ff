// cublas_gemm.cpp — see cublas_gemm.h. Row-major C = A·op(B) is column-major Cᵀ = op(B)ᵀ·Aᵀ, so
// the operands are passed swapped.
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

void CublasGemm::nt(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    for (int b0 = 0; b0 < batch; b0 += kMaxBatch)  // in parts: a batch of B·H heads may pass the grid's 65535
        check(cublasSgemmStridedBatched(h_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B + size_t(b0) * N * K, K,
                                        (long long)N * K, A + size_t(b0) * M * K, K, (long long)M * K, &beta,
                                        C + size_t(b0) * M * N, N, (long long)M * N, std::min(batch - b0, kMaxBatch)),
              "SgemmStridedBatched (NT)");
}

void CublasGemm::nn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    for (int b0 = 0; b0 < batch; b0 += kMaxBatch)
        check(cublasSgemmStridedBatched(h_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B + size_t(b0) * K * N, N,
                                        (long long)K * N, A + size_t(b0) * M * K, K, (long long)M * K, &beta,
                                        C + size_t(b0) * M * N, N, (long long)M * N, std::min(batch - b0, kMaxBatch)),
              "SgemmStridedBatched (NN)");
}

void CublasGemm::tn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha, float beta) {
    for (int b0 = 0; b0 < batch; b0 += kMaxBatch)
        check(cublasSgemmStridedBatched(h_, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &alpha, B + size_t(b0) * K * N, N,
                                        (long long)K * N, A + size_t(b0) * K * M, M, (long long)K * M, &beta,
                                        C + size_t(b0) * M * N, N, (long long)M * N, std::min(batch - b0, kMaxBatch)),
              "SgemmStridedBatched (TN)");
}

}  // namespace attn
