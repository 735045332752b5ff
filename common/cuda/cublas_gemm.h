// cublas_gemm.h — row-major batched SGEMM through cuBLAS (fp32, TF32 off), and a device RNG fill.
//
// Used for baselines and ceilings, and by the model code of Tasks 6–7 where the tasks allow it;
// never by a student's kernel where a task forbids libraries.
#pragma once
#include <cstddef>
#include <cstdint>

typedef struct cublasContext* cublasHandle_t;

namespace attn {

class CublasGemm {
public:
    CublasGemm();
    ~CublasGemm();
    CublasGemm(const CublasGemm&) = delete;
    CublasGemm& operator=(const CublasGemm&) = delete;
    // C[b] = alpha · A[b] · B[b]ᵀ + beta · C[b]   A: [M, K], B: [N, K], C: [M, N], all row-major,
    // contiguous per batch (beta = 1 adds to C: a residual connection).
    void nt(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha = 1.f, float beta = 0.f);
    // C[b] = A[b] · B[b]    A: [M, K], B: [K, N], C: [M, N].
    void nn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha = 1.f, float beta = 0.f);
    // C[b] = alpha · A[b]ᵀ · B[b]    A: [K, M], B: [K, N], C: [M, N] (attention's backward: dV = Pᵀ·dO).
    void tn(const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha = 1.f, float beta = 0.f);

private:
    void batched(bool trans_a, bool trans_b, const float* A, const float* B, float* C, int batch, int M, int N, int K, float alpha,
                 float beta, const char* what);
    cublasHandle_t h_ = nullptr;
};

// Fills n floats with uniform values in [lo, hi) from `seed` (a counter-based hash, on the GPU).
void fill_uniform(float* p, size_t n, uint64_t seed, float lo, float hi);
// Same, normal(0, 1) · scale (Box–Muller).
// Elements first … first + n − 1 of the fill: a slice of a larger tensor equals the whole one's slice.
void fill_normal(float* p, size_t n, uint64_t seed, float scale = 1.f, size_t first = 0);
// fill_normal's values (scale 1, from index 0) rounded to bf16 (nearest even): n __nv_bfloat16 at p.
void fill_normal_bf16(void* p, size_t n, uint64_t seed);

}  // namespace attn
