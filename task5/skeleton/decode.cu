// Task 5 — the KV cache and decode attention, with split-KV (FlashDecoding).
//
// Build and run:  make task5                      (your skeleton: tests)
//                 make task5 IMPL=reference       make bench-task5 IMPL=reference   (GPU)
// Decoding reads the whole cache once per token and does 4·D FLOPs per 8·D bytes: it is bound by
// memory bandwidth, so the work is laid out for wide, coalesced loads, and spread over enough
// blocks to keep every SM streaming: with few (batch, head) pairs, the positions are split
// across blocks (split-KV) and a second kernel combines the partial softmaxes.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/todo.h"
#include "task5/task5.h"
#include "task5/variants.h"

namespace task5 {

// ------------------------------------------------------------------------------------------------
// Given: copying the prefill's K and V into the cache
// ------------------------------------------------------------------------------------------------
__global__ void store_rows_kernel(float* cache, const float* src, int max_seq, int S, int D, size_t total4) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total4; i += size_t(gridDim.x) * blockDim.x) {
        const size_t per_head = size_t(S) * D / 4, bh = i / per_head, r = i % per_head;  // r: float4 within the head
        reinterpret_cast<float4*>(cache + bh * size_t(max_seq) * D)[r] = reinterpret_cast<const float4*>(src)[i];
    }
}

static void check_head_dim(int D, const char* who) {
    if (D != 32 && D != 64 && D != 96 && D != 128)
        throw std::invalid_argument(std::string(who) + ": head_dim " + std::to_string(D) + " is not supported (32, 64, 96 or 128)");
}

void store_prefill(float* k_cache, float* v_cache, const float* k, const float* v, int B, int H, int max_seq, int S, int D) {
    check_head_dim(D, "store_prefill");
    if (S > max_seq) throw std::out_of_range("store_prefill: " + std::to_string(S) + " positions do not fit a cache of " +
                                             std::to_string(max_seq));
    const size_t total4 = size_t(B) * H * S * D / 4;
    if (total4 == 0) return;
    const unsigned grid = unsigned(std::min<size_t>(total4 / 256 + 1, 8192));
    store_rows_kernel<<<grid, 256>>>(k_cache, k, max_seq, S, D, total4);
    CUDA_CHECK_LAUNCH();
    store_rows_kernel<<<grid, 256>>>(v_cache, v, max_seq, S, D, total4);
    CUDA_CHECK_LAUNCH();
}

// ------------------------------------------------------------------------------------------------
// task5.1 — append one token
// ------------------------------------------------------------------------------------------------
// TODO(task5.1): copy k_new[b, h, 0, :] to k_cache[b, h, pos, :] (and the same for V) for every
// (b, h): one block per (b, h) and one thread per element (or per float4) of the head works well.
__global__ void update_cache_kernel(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int max_seq,
                                    int D, int pos) {}

void update_cache(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int B, int H, int max_seq,
                  int D, int pos) {
    // TODO(task5.1): first refuse pos < 0 or pos >= max_seq with std::out_of_range naming pos and
    // max_seq (a write past the end would corrupt other memory silently), then launch
    // update_cache_kernel and CUDA_CHECK_LAUNCH().
    (void)k_cache, (void)v_cache, (void)k_new, (void)v_new, (void)B, (void)H, (void)max_seq, (void)D, (void)pos;
    ATTNLAB_TODO("task5.1");
}

// ------------------------------------------------------------------------------------------------
// task5.2 — decode attention
// ------------------------------------------------------------------------------------------------
// TODO(task5.2): the Task-4 kernel with one query row: one block per (b, h), blockIdx.x = b·H + h.
//   1. load q (D floats) into shared memory or registers;
//   2. for each tile of Bc cache positions below len: load K and V tiles into shared memory,
//      s_j = q·k_j / √D, and the online-softmax update — m_new = max(m, max_j s_j),
//      alpha = exp(m − m_new), l = alpha·l + Σ exp(s_j − m_new), o = alpha·o + Σ_j exp(s_j − m_new)·v_j;
//   3. write o / l.
// Never read position len or later: those rows hold the next tokens' garbage (the tests fill them
// with NaN). Faster (optional, as FlashDecoding): split the positions over several blocks per
// (b, h) and combine their partial (m, l, o) in a second kernel.
template <int Bc>
__global__ void decode_kernel(const float* q, const float* k_cache, const float* v_cache, float* o, int max_seq, int len,
                              int D, float scale) {}

void decode_attention(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq,
                      int len, int D) {
    // TODO(task5.2): launch decode_kernel<Bc> on B·H blocks (dynamic shared memory for the tiles as
    // in Task 4), then CUDA_CHECK_LAUNCH(). Refuse len < 1 or len > max_seq with std::out_of_range.
    (void)q, (void)k_cache, (void)v_cache, (void)o, (void)B, (void)H, (void)max_seq, (void)len, (void)D;
    ATTNLAB_TODO("task5.2");
}

}  // namespace task5
