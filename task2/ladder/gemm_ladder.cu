// gemm_ladder.cu — Task 2's GEMM ladder, C = A·B (course staff material, not in the student kit).
//   plan        the textbook 16 × 16 tile: each thread one output, two shared-memory loads per FMA
//   reg 4x4     a 64 × 64 tile per block of 256 threads, each thread a 4 × 4 block of outputs in
//               registers: 8 shared-memory loads per 16 FMAs
//   reg 8x8     a 128 × 128 tile, 8 × 8 outputs per thread, A stored transposed so that each
//               thread reads its operands as float4s: 4 loads (of 16 bytes) per 64 FMAs
//   reference   task2/reference: the same, with the next K tile fetched from global memory while
//               the current one is multiplied (double-buffered shared memory)
// Loads outside M, N, K read zeros, so any shape works.
// Build and run (staff):  make ladder-task2 IMPL=reference   (build/reference/bin/ladder_task2)
#include <cuda_runtime.h>

#include "common/cuda/cuda_check.h"
#include "task2/ladder/ladder.h"

namespace task2_ladder {
namespace {

__device__ __forceinline__ float at(const float* X, int r, int c, int rows, int cols) {
    return r < rows && c < cols ? X[size_t(r) * cols + c] : 0.0f;
}

constexpr int T = 16;
__global__ void plan_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[T][T], Bs[T][T];
    A += size_t(blockIdx.z) * M * K, B += size_t(blockIdx.z) * K * N, C += size_t(blockIdx.z) * M * N;
    const int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[threadIdx.y][threadIdx.x] = at(A, row, k0 + threadIdx.x, M, K);
        Bs[threadIdx.y][threadIdx.x] = at(B, k0 + threadIdx.y, col, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[size_t(row) * N + col] = acc;
}

// 64 × 64 tile, BK = 16, 256 threads as 16 × 16, thread (ty, tx) owns rows ty + 16i, columns tx + 16j.
__global__ void __launch_bounds__(256) reg4x4_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int BM = 64, BK = 16;
    __shared__ float As[BM][BK + 1], Bs[BK][BM];
    A += size_t(blockIdx.z) * M * K, B += size_t(blockIdx.z) * K * N, C += size_t(blockIdx.z) * M * N;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, m0 = blockIdx.y * BM, n0 = blockIdx.x * BM;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += 256) {
            As[i / BK][i % BK] = at(A, m0 + i / BK, k0 + i % BK, M, K);
            Bs[i / BM][i % BM] = at(B, k0 + i / BM, n0 + i % BM, K, N);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[ty + 16 * i][k], b[i] = Bs[k][tx + 16 * i];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int r = m0 + ty + 16 * i, c = n0 + tx + 16 * j;
            if (r < M && c < N) C[size_t(r) * N + c] = acc[i][j];
        }
}

// 128 × 128 tile, BK = 8, 256 threads; thread (ty, tx) owns rows {4ty…4ty+3, 64+4ty…} and the
// same pattern of columns; A is stored transposed (As[k][m]) so both operands are float4 reads.
__global__ void __launch_bounds__(256, 2) reg8x8_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int BM = 128, BK = 8;
    __shared__ __align__(16) float As[BK][BM + 4], Bs[BK][BM + 4];
    A += size_t(blockIdx.z) * M * K, B += size_t(blockIdx.z) * K * N, C += size_t(blockIdx.z) * M * N;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, m0 = blockIdx.y * BM, n0 = blockIdx.x * BM;
    float acc[8][8] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += 256) {
            As[i % BK][i / BK] = at(A, m0 + i / BK, k0 + i % BK, M, K);
            Bs[i / BM][i % BM] = at(B, k0 + i / BM, n0 + i % BM, K, N);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[8], b[8];
            *reinterpret_cast<float4*>(a) = *reinterpret_cast<const float4*>(&As[k][4 * ty]);
            *reinterpret_cast<float4*>(a + 4) = *reinterpret_cast<const float4*>(&As[k][64 + 4 * ty]);
            *reinterpret_cast<float4*>(b) = *reinterpret_cast<const float4*>(&Bs[k][4 * tx]);
            *reinterpret_cast<float4*>(b + 4) = *reinterpret_cast<const float4*>(&Bs[k][64 + 4 * tx]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int r = m0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4), c = n0 + (j < 4 ? 4 * tx + j : 64 + 4 * tx + j - 4);
            if (r < M && c < N) C[size_t(r) * N + c] = acc[i][j];
        }
}

}  // namespace

void gemm_plan(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    if (batch == 0 || M == 0 || N == 0) return;
    plan_kernel<<<dim3((N + T - 1) / T, (M + T - 1) / T, batch), dim3(T, T)>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

void gemm_reg4x4(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    if (batch == 0 || M == 0 || N == 0) return;
    reg4x4_kernel<<<dim3((N + 63) / 64, (M + 63) / 64, batch), 256>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

void gemm_reg8x8(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    if (batch == 0 || M == 0 || N == 0) return;
    reg8x8_kernel<<<dim3((N + 127) / 128, (M + 127) / 128, batch), 256>>>(A, B, C, M, N, K);
    CUDA_CHECK_LAUNCH();
}

}  // namespace task2_ladder
