// Task 5 — the KV cache and decode attention.
//
// Build and run:  make task5                      (your skeleton: tests)
//                 make bench-task5                (GB/s of decode; the course's run, on a GPU)
// Decoding reads the whole cache once per token and does 4·D FLOPs per 8·D bytes: it is bound by
// memory bandwidth, so the work is laid out for wide, coalesced loads, spread over enough blocks
// to keep every SM streaming. task5/README.md gives the plan and the measured ladder beyond it.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/grid.cuh"
#include "common/cuda/kernel_todo.cuh"
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
// TODO(task5.2): the plan of task5/README.md. One block of 4 warps per (b, h), blockIdx.x = b·H + h.
//   - lane l of every warp holds q[d] for d = l, l+32, … (D/32 values), scaled by 1/√D;
//   - warp w takes cache positions j = w, w+4, w+8, … below len: the dot product q·k_j from its
//     lanes' D/32 products, summed over the warp with __shfl_xor_sync (offsets 16, 8, 4, 2, 1; after
//     that every lane holds it), then the online softmax of the warp — m_new = max(m, s),
//     alpha = exp(m − m_new), p = exp(s − m_new), l = alpha·l + p, o = alpha·o + p·v_j (each lane its
//     own D/32 dims of o), m = m_new. A warp reads each K and V row as one 512-byte request.
//   - then merge the 4 warps' (m, l, o) in shared memory: M = max m_w, L = Σ l_w·exp(m_w − M),
//     o = Σ o_w·exp(m_w − M) / L (a warp that saw no position has m = −inf and weight 0).
// Never read position len or later: those rows hold the next tokens' garbage (the tests fill them
// with NaN). Faster, and the README's ladder says by how much: split the positions over several
// blocks per (b, h) and combine their partial (m, l, o) in a second kernel (FlashDecoding).
template <int D>
__global__ void __launch_bounds__(128) decode_kernel(const float* q, const float* k_cache, const float* v_cache, float* o,
                                                     int max_seq, int len, float scale) {
    ATTNLAB_KERNEL_TODO(o, 5, 2);  // the tests then say "task5.2 not implemented": delete this line when you write the kernel
}

void decode_attention(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq,
                      int len, int D) {
    // TODO(task5.2): refuse len < 1 or len > max_seq with std::out_of_range naming both, and a head_dim
    // outside {32, 64, 96, 128} with std::invalid_argument naming it; then launch decode_kernel<D>
    // (a switch over the four D) on B·H blocks of 128 threads, then CUDA_CHECK_LAUNCH().
    (void)q, (void)k_cache, (void)v_cache, (void)o, (void)B, (void)H, (void)max_seq, (void)len, (void)D;
    ATTNLAB_TODO("task5.2");
}

}  // namespace task5
