// attention_oracle.cu — see attention_oracle.h. Part of the harness (not a task): the masked
// softmax here is deliberately the simplest correct one, one block per row, two passes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/grid.cuh"

namespace attn {
namespace {

constexpr int kThreads = 256;

__device__ float block_max(float v, float* red) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, off));
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    v = -INFINITY;
    for (int w = 0; w < kThreads / 32; ++w) v = fmaxf(v, red[w]);
    __syncthreads();
    return v;
}

__device__ float block_sum(float v, float* red) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0;
    for (int w = 0; w < kThreads / 32; ++w) v += red[w];
    __syncthreads();
    return v;
}

// scores already scaled; row index = blockIdx.x over BH·Sq rows.
__global__ void masked_softmax_kernel(float* scores, int Sq, int Sk, bool causal) {
    __shared__ float red[kThreads / 32];
    const int i = int(blockIdx.x % Sq);
    float* row = scores + size_t(blockIdx.x) * Sk;
    const long last_visible = causal ? long(i) + Sk - Sq : long(Sk) - 1;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < Sk; j += kThreads)
        if (j <= last_visible) m = fmaxf(m, row[j]);
    m = block_max(m, red);
    float s = 0;
    for (int j = threadIdx.x; j < Sk; j += kThreads)
        if (j <= last_visible) s += expf(row[j] - m);
    s = block_sum(s, red);
    for (int j = threadIdx.x; j < Sk; j += kThreads) row[j] = (j <= last_visible && s > 0) ? expf(row[j] - m) / s : 0.0f;
}

// scores[bh, j] = q·k_j / √D, one thread per position
__global__ void decode_scores_kernel(const float* q, const float* k_cache, double* scores, int max_seq, int len, int D,
                                     long long BH) {
    const long long bh = head_of_block();
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (bh >= BH || j >= len) return;
    const float* k = k_cache + (size_t(bh) * max_seq + j) * D;
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += double(q[size_t(bh) * D + d]) * k[d];
    scores[size_t(bh) * len + j] = dot / sqrt(double(D));
}

// one block per (batch, head): max and sum by one thread (plain, not fast), then o[d] per thread
__global__ void decode_output_kernel(const float* v_cache, float* o, const double* scores, int max_seq, int len, int D) {
    const int bh = blockIdx.x;
    const double* s = scores + size_t(bh) * len;
    __shared__ double mx, sum;
    if (threadIdx.x == 0) {
        mx = -INFINITY, sum = 0;
        for (int j = 0; j < len; ++j) mx = fmax(mx, s[j]);
        for (int j = 0; j < len; ++j) sum += exp(s[j] - mx);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        double acc = 0;
        for (int j = 0; j < len; ++j) acc += exp(s[j] - mx) * v_cache[(size_t(bh) * max_seq + j) * D + d];
        o[size_t(bh) * D + d] = float(acc / sum);
    }
}

}  // namespace

void decode_oracle(const float* q, const float* k_cache, const float* v_cache, float* o, int BH, int max_seq, int len,
                   int D, double* scores) {
    decode_scores_kernel<<<grid_over_heads(unsigned((len + 127) / 128), BH), 128>>>(q, k_cache, scores, max_seq, len, D, BH);
    CUDA_CHECK_LAUNCH();
    decode_output_kernel<<<BH, 128>>>(v_cache, o, scores, max_seq, len, D);
    CUDA_CHECK_LAUNCH();
}

void softmax_oracle(float* x, int rows, int cols) {
    masked_softmax_kernel<<<unsigned(rows), kThreads>>>(x, rows, cols, false);
    CUDA_CHECK_LAUNCH();
}

void attention_oracle(CublasGemm& gemm, const float* q, const float* k, const float* v, float* o, int BH, int Sq, int Sk,
                      int D, bool causal, float* scores) {
    gemm.nt(q, k, scores, BH, Sq, Sk, D, 1.0f / std::sqrt(float(D)));
    masked_softmax_kernel<<<unsigned(size_t(BH) * Sq), kThreads>>>(scores, Sq, Sk, causal);
    CUDA_CHECK_LAUNCH();
    gemm.nn(scores, v, o, BH, Sq, D, Sk);
}

int heads_per_gb_of_scores(int BH, int Sq, int Sk) {
    return int(std::max<size_t>(1, std::min<size_t>(size_t(BH), (size_t(1) << 30) / (sizeof(float) * size_t(Sq) * Sk))));
}

void sliced_attention_oracle(CublasGemm& gemm, const float* q, const float* k, const float* v, float* o, int BH, int S,
                             int D, bool causal, DeviceBuffer<float>& scores) {
    const int chunk = heads_per_gb_of_scores(BH, S, S);
    if (scores.size() < size_t(chunk) * S * S) scores = DeviceBuffer<float>(size_t(chunk) * S * S);
    const size_t head = size_t(S) * D;
    for (int h = 0; h < BH; h += chunk)
        attention_oracle(gemm, q + h * head, k + h * head, v + h * head, o + h * head, std::min(chunk, BH - h), S, S, D,
                         causal, scores.get());
}

}  // namespace attn
