// task2.h — Task 2: CUDA building blocks of attention. The frozen interface.
//
// Every pointer is a device pointer to row-major float32; every function launches its kernels on
// the default stream and returns without synchronising. Shapes in brackets.
#pragma once

namespace task2 {

// task2.1  out[r, :] = softmax(in[r, :]) for rows × cols; one thread block per row, numerically
//          stable (max subtracted), any cols ≥ 1. `out` may be `in` (in place).
void softmax_batched(const float* in, float* out, int rows, int cols);

// task2.2  C[b] = A[b] · B[b]ᵀ      A [batch, M, K], B [batch, N, K], C [batch, M, N]
void gemm_nt(const float* A, const float* B, float* C, int batch, int M, int N, int K);

// task2.3  C[b] = A[b] · B[b]       A [batch, M, K], B [batch, K, N], C [batch, M, N]
void gemm_nn(const float* A, const float* B, float* C, int batch, int M, int N, int K);

// Given: scores [batch, rows, cols] *= scale; with `causal`, entries with col > row become −inf.
void scale_and_causal_mask(float* scores, int batch, int rows, int cols, float scale, bool causal);

// Given: [B, S, H·D] → [B, H, S, D] and back.
void split_heads(const float* x, float* xh, int B, int S, int H, int D);
void merge_heads(const float* xh, float* x, int B, int S, int H, int D);

// task2.4  the unfused attention of Task 1 on the GPU: q, k, v, out [B, S, hidden], hidden = H·D.
//          split heads → QKᵀ (gemm_nt) → scale and mask → softmax → ·V (gemm_nn) → merge heads.
void custom_attention(const float* q, const float* k, const float* v, float* out, int B, int S, int hidden,
                      int num_heads, bool causal);

// The same pipeline on inputs already split into heads: q, k, v, out [BH, S, D]; `scores` is a
// workspace of BH·S·S floats. (Task 4 times this as its unfused baseline.)
void attention_heads(const float* q, const float* k, const float* v, float* out, int BH, int S, int D, bool causal,
                     float* scores);

}  // namespace task2
