// ladder.h — Task 2's optimisation ladders (softmax_ladder.cu, gemm_ladder.cu), for the staff benchmark.
#pragma once

namespace task2_ladder {

// Row softmax with task2::softmax_batched's signature.
void softmax_three_pass(const float* in, float* out, int rows, int cols);  // the plan: max, sum, normalise; shared-memory trees
void softmax_vec4(const float* in, float* out, int rows, int cols);        // the same passes, float4 loads, warp shuffles

// C[b] = A[b]·B[b] with task2::gemm_nn's signature.
void gemm_plan(const float* A, const float* B, float* C, int batch, int M, int N, int K);      // 16 × 16 tiles, 1 output per thread
void gemm_reg4x4(const float* A, const float* B, float* C, int batch, int M, int N, int K);    // 64 × 64 tiles, 4 × 4 outputs per thread
void gemm_reg8x8(const float* A, const float* B, float* C, int batch, int M, int N, int K);    // 128 × 128 tiles, 8 × 8, float4 reads

}  // namespace task2_ladder
