// Task 2 — CUDA building blocks of attention: batched softmax, tiled GEMM (A·Bᵀ and A·B), and the
// unfused attention pipeline assembled from them.
//
// Build and run:  make task2 [SUITE=softmax|gemm|attention]           (your skeleton)
//                 make task2 IMPL=reference;  make bench-task2 IMPL=reference   (on a GPU)
// Kernels here run on the default stream; the harness synchronises and checks every launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "common/cuda/cuda_check.h"
#include "common/cuda/kernel_todo.cuh"
#include "common/todo.h"
#include "task2/task2.h"

namespace task2 {

// The grid's second and third dimensions stop at 65535 blocks (the first at 2³¹ − 1): a batch of B·H = 70000
// heads is launched in parts.
constexpr int kMaxGridY = 65535;
[[maybe_unused]] constexpr int kMaxGridZ = 65535;  // the skeleton's gemm_nt leaves its use to the student

// ================================================================================================
// task2.1 — softmax, one block per row
// ================================================================================================
// TODO(task2.1): one block per row (blockIdx.x = row). Three steps, each a block-wide reduction:
//   1. the row maximum m   (each thread scans a strided part of the row, then combine the threads'
//      values through shared memory — a tree reduction — or warp shuffles, __shfl_xor_sync)
//   2. sum of exp(x − m)   (same reduction, with + instead of max)
//   3. out = exp(x − m) / sum
// Subtracting m keeps exp() from overflowing (x > 88 is inf in float32). Rows can be 1 long or
// 32768 long: loop, don't assume cols ≤ blockDim.x.
__global__ void softmax_kernel(const float* in, float* out, int cols) {
    ATTNLAB_KERNEL_TODO(out, 2, 1);  // the tests then say "task2.1 not implemented": delete this line when you write the kernel
}

void softmax_batched(const float* in, float* out, int rows, int cols) {
    // TODO(task2.1): launch softmax_kernel with one block per row (grid = rows) and a block size
    // of your choice (a multiple of 32; 256 is a good start), then CUDA_CHECK_LAUNCH().
    (void)in, (void)out, (void)rows, (void)cols;
    ATTNLAB_TODO("task2.1");
}

// ================================================================================================
// task2.2 / task2.3 — tiled GEMM
// ================================================================================================
// TODO(task2.2, task2.3): the tiled GEMM. Start with the textbook version: a TILE × TILE block
// (TILE = 16) computes a TILE × TILE tile of C. Loop over K in steps of TILE: each thread loads one
// element of the A tile and one of the B tile into __shared__ arrays, __syncthreads(), accumulates
// TILE products from shared memory, __syncthreads() again. Batch b is blockIdx.z: offset A, B, C by
// b·M·K, b·N·K (or b·K·N), b·M·N. gridDim.z stops at 65535 while batch = B·H need not: launch at most
// kMaxGridZ batches at a time, the pointers moved on by the batches done (as scale_and_causal_mask below). Load zeros outside M, N, K so that sizes no tile divides work.
// gemm_nt reads B as [N, K] (row n of B is column n of Bᵀ); gemm_nn reads B as [K, N].
// Faster: give each thread several outputs in registers (e.g. 8 × 8) — see task2/README.md.
__global__ void gemm_nt_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    ATTNLAB_KERNEL_TODO(C, 2, 2);  // the tests then say "task2.2 not implemented": delete this line when you write the kernel
}
__global__ void gemm_nn_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    ATTNLAB_KERNEL_TODO(C, 2, 3);  // the tests then say "task2.3 not implemented": delete this line when you write the kernel
}

void gemm_nt(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    // TODO(task2.2): launch gemm_nt_kernel with grid (ceil(N/TILE), ceil(M/TILE), batch) — batch in launches of at
    // most kMaxGridZ (65535), as scale_and_causal_mask does.
    (void)A, (void)B, (void)C, (void)batch, (void)M, (void)N, (void)K;
    ATTNLAB_TODO("task2.2");
}

void gemm_nn(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    // TODO(task2.3): launch gemm_nn_kernel with grid (ceil(N/TILE), ceil(M/TILE), batch) — batch in launches of at
    // most kMaxGridZ (65535), as scale_and_causal_mask does.
    (void)A, (void)B, (void)C, (void)batch, (void)M, (void)N, (void)K;
    ATTNLAB_TODO("task2.3");
}

// ================================================================================================
// Given: scaling and the causal mask, head split/merge
// ================================================================================================
__global__ void scale_and_causal_mask_kernel(float* scores, int rows, int cols, float scale, bool causal) {
    const size_t per_batch = size_t(rows) * cols;
    float* s = scores + blockIdx.y * per_batch;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < per_batch; i += size_t(gridDim.x) * blockDim.x) {
        const int r = int(i / cols), c = int(i % cols);
        s[i] = (causal && c > r) ? -INFINITY : s[i] * scale;
    }
}

void scale_and_causal_mask(float* scores, int batch, int rows, int cols, float scale, bool causal) {
    if (batch == 0 || rows == 0 || cols == 0) return;
    const size_t per_batch = size_t(rows) * cols;
    for (int b0 = 0; b0 < batch; b0 += kMaxGridY) {  // gridDim.y stops at 65535: further batches, further launches
        const dim3 grid(unsigned(per_batch / 256 + 1 < 1024 ? per_batch / 256 + 1 : 1024), std::min(batch - b0, kMaxGridY));
        scale_and_causal_mask_kernel<<<grid, 256>>>(scores + size_t(b0) * per_batch, rows, cols, scale, causal);
        CUDA_CHECK_LAUNCH();
    }
}

// to_heads: [B, S, H, D] → [B, H, S, D]; otherwise the reverse.
__global__ void permute_heads_kernel(const float* in, float* out, int B, int S, int H, int D, bool to_heads) {
    const size_t n = size_t(B) * S * H * D;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const int d = int(i % D);
        size_t rest = i / D;
        // i indexes the output; find the matching input element
        if (to_heads) {  // out [B, H, S, D]
            const int s = int(rest % S), h = int(rest / S % H), b = int(rest / S / H);
            out[i] = in[((size_t(b) * S + s) * H + h) * D + d];
        } else {  // out [B, S, H, D]
            const int h = int(rest % H), s = int(rest / H % S), b = int(rest / H / S);
            out[i] = in[((size_t(b) * H + h) * S + s) * D + d];
        }
    }
}

static void permute_heads(const float* in, float* out, int B, int S, int H, int D, bool to_heads) {
    const size_t n = size_t(B) * S * H * D;
    if (n == 0) return;
    permute_heads_kernel<<<unsigned(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096), 256>>>(in, out, B, S, H, D, to_heads);
    CUDA_CHECK_LAUNCH();
}

void split_heads(const float* x, float* xh, int B, int S, int H, int D) { permute_heads(x, xh, B, S, H, D, true); }
void merge_heads(const float* xh, float* x, int B, int S, int H, int D) { permute_heads(xh, x, B, S, H, D, false); }

// ================================================================================================
// task2.4 — the unfused pipeline
// ================================================================================================
void attention_heads(const float* q, const float* k, const float* v, float* out, int BH, int S, int D, bool causal,
                     float* scores) {
    // TODO(task2.4): the four kernels in order, all on [BH, S, ·] batches:
    //   gemm_nt (scores = Q·Kᵀ, M = N = S, K = D) → scale_and_causal_mask (scale 1/√D) →
    //   softmax_batched (BH·S rows of length S) → gemm_nn (out = P·V, M = S, N = D, K = S).
    (void)q, (void)k, (void)v, (void)out, (void)BH, (void)S, (void)D, (void)causal, (void)scores;
    ATTNLAB_TODO("task2.4");
}

// Given: allocation and the head split around attention_heads.
void custom_attention(const float* q, const float* k, const float* v, float* out, int B, int S, int hidden,
                      int num_heads, bool causal) {
    const int H = num_heads, D = hidden / num_heads, BH = B * H;
    const size_t n = size_t(B) * S * hidden;
    float *qh, *kh, *vh, *oh, *scores;
    CUDA_CHECK(cudaMallocAsync(&qh, 4 * n * sizeof(float) + size_t(BH) * S * S * sizeof(float), 0));
    kh = qh + n, vh = kh + n, oh = vh + n, scores = oh + n;
    split_heads(q, qh, B, S, H, D);
    split_heads(k, kh, B, S, H, D);
    split_heads(v, vh, B, S, H, D);
    attention_heads(qh, kh, vh, oh, BH, S, D, causal, scores);
    merge_heads(oh, out, B, S, H, D);
    CUDA_CHECK(cudaFreeAsync(qh, 0));
}

}  // namespace task2
