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
#if SOLUTION
// One block per (batch, head); D/4 threads each move one float4 of K and one of V.
__global__ void update_cache_kernel(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int max_seq,
                                    int D, int pos) {
    const size_t bh = blockIdx.x, dst = (bh * max_seq + pos) * D / 4 + threadIdx.x, src = bh * D / 4 + threadIdx.x;
    reinterpret_cast<float4*>(k_cache)[dst] = reinterpret_cast<const float4*>(k_new)[src];
    reinterpret_cast<float4*>(v_cache)[dst] = reinterpret_cast<const float4*>(v_new)[src];
}
#else
// TODO(task5.1): copy k_new[b, h, 0, :] to k_cache[b, h, pos, :] (and the same for V) for every
// (b, h): one block per (b, h) and one thread per element (or per float4) of the head works well.
__global__ void update_cache_kernel(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int max_seq,
                                    int D, int pos) {}
#endif

void update_cache(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int B, int H, int max_seq,
                  int D, int pos) {
#if SOLUTION
    check_head_dim(D, "update_cache");
    if (pos < 0 || pos >= max_seq)
        throw std::out_of_range("update_cache: pos " + std::to_string(pos) + " is outside the cache (max_seq " +
                                std::to_string(max_seq) + ")");
    if (B * H == 0) return;
    update_cache_kernel<<<B * H, D / 4>>>(k_cache, v_cache, k_new, v_new, max_seq, D, pos);
    CUDA_CHECK_LAUNCH();
#else
    // TODO(task5.1): first refuse pos < 0 or pos >= max_seq with std::out_of_range naming pos and
    // max_seq (a write past the end would corrupt other memory silently), then launch
    // update_cache_kernel and CUDA_CHECK_LAUNCH().
    (void)k_cache, (void)v_cache, (void)k_new, (void)v_new, (void)B, (void)H, (void)max_seq, (void)D, (void)pos;
    ATTNLAB_TODO("task5.1");
#endif
}

// ------------------------------------------------------------------------------------------------
// task5.2 — decode attention
// ------------------------------------------------------------------------------------------------
#if SOLUTION
// Eight lanes share a position: lane l of the eight holds float4s l, l+8, … of the head (D/32 of
// them), so the eight read one 128-byte run of each row; a warp covers 4 positions at a time and
// WARPS warps 4·WARPS. Each lane group keeps its own online softmax (m, l, acc); the block merges
// its 4·WARPS states in shared memory. Scores are kept in base 2 (exp2), scaled by log2(e)/√D.
constexpr int kWarps = 4;

template <int D>
struct alignas(16) Slot {  // one lane group's running state, as the block merges them
    float acc[D];          // first, so that its float4s are 16-byte aligned
    float m, l;
};

template <int D>
__global__ void __launch_bounds__(kWarps * 32) decode_kernel(const float* q, const float* k_cache, const float* v_cache,
                                                             float* o, float* part_o, float* part_ml, int max_seq, int len,
                                                             int chunk, int splits, float scale_log2, long long BH) {
    constexpr int CH = D / 32;  // float4s per lane
    __shared__ Slot<D> slots[kWarps * 4];
    const int split = blockIdx.x;
    const long long bh = attn::head_of_block();  // blockIdx.y, and z past 65535 heads (common/cuda/grid.cuh)
    if (bh >= BH) return;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sub = lane / 8, l8 = lane % 8;
    const float4* q4 = reinterpret_cast<const float4*>(q + size_t(bh) * D);
    const float4* k4 = reinterpret_cast<const float4*>(k_cache + size_t(bh) * max_seq * D);
    const float4* v4 = reinterpret_cast<const float4*>(v_cache + size_t(bh) * max_seq * D);
    float4 qv[CH], acc[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c) {
        const float4 x = q4[c * 8 + l8];
        qv[c] = make_float4(x.x * scale_log2, x.y * scale_log2, x.z * scale_log2, x.w * scale_log2);
        acc[c] = make_float4(0, 0, 0, 0);
    }
    float m = -INFINITY, l = 0;
    const int start = split * chunk, end = min(len, start + chunk);
    // The loop runs alike in all 32 lanes of a warp (the shuffles need every lane); a lane group
    // past the end loads nothing and changes nothing.
#pragma unroll 2
    for (int j0 = start + warp * 4; j0 < end; j0 += kWarps * 4) {
        const int j = j0 + sub;
        const bool valid = j < end;
        float4 kr[CH], vr[CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            kr[c] = valid ? k4[size_t(j) * (D / 4) + c * 8 + l8] : make_float4(0, 0, 0, 0);
            vr[c] = valid ? v4[size_t(j) * (D / 4) + c * 8 + l8] : make_float4(0, 0, 0, 0);
        }
        float s = 0;
#pragma unroll
        for (int c = 0; c < CH; ++c) s += qv[c].x * kr[c].x + qv[c].y * kr[c].y + qv[c].z * kr[c].z + qv[c].w * kr[c].w;
        s += __shfl_xor_sync(0xffffffff, s, 1);
        s += __shfl_xor_sync(0xffffffff, s, 2);
        s += __shfl_xor_sync(0xffffffff, s, 4);
        if (!valid) continue;
        const float m_new = fmaxf(m, s), alpha = exp2f(m - m_new), p = exp2f(s - m_new);
        l = l * alpha + p;
        m = m_new;
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            acc[c].x = acc[c].x * alpha + p * vr[c].x, acc[c].y = acc[c].y * alpha + p * vr[c].y;
            acc[c].z = acc[c].z * alpha + p * vr[c].z, acc[c].w = acc[c].w * alpha + p * vr[c].w;
        }
    }
    Slot<D>& mine = slots[warp * 4 + sub];
    if (l8 == 0) mine.m = m, mine.l = l;
#pragma unroll
    for (int c = 0; c < CH; ++c) reinterpret_cast<float4*>(mine.acc)[c * 8 + l8] = acc[c];
    __syncthreads();

    // merge the block's states; a state that saw no position has m = −inf and weight 0
    float M = -INFINITY;
    for (int s = 0; s < kWarps * 4; ++s) M = fmaxf(M, slots[s].m);
    float L = 0;
    for (int s = 0; s < kWarps * 4; ++s) L += slots[s].m == -INFINITY ? 0.f : slots[s].l * exp2f(slots[s].m - M);
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float out = 0;
        for (int s = 0; s < kWarps * 4; ++s)
            if (slots[s].m != -INFINITY) out += slots[s].acc[d] * exp2f(slots[s].m - M);
        if (splits == 1) o[size_t(bh) * D + d] = L > 0 ? out / L : 0.f;
        else part_o[(size_t(bh) * splits + split) * D + d] = out;
    }
    if (splits > 1 && threadIdx.x == 0) part_ml[(size_t(bh) * splits + split) * 2] = M, part_ml[(size_t(bh) * splits + split) * 2 + 1] = L;
}

// One block per (batch, head): o = Σ_s O_s·2^(m_s − M) / Σ_s l_s·2^(m_s − M).
__global__ void combine_kernel(const float* part_o, const float* part_ml, float* o, int splits, int D) {
    const int bh = blockIdx.x;
    const float* ml = part_ml + size_t(bh) * splits * 2;
    float M = -INFINITY, L = 0;
    for (int s = 0; s < splits; ++s) M = fmaxf(M, ml[2 * s]);
    for (int s = 0; s < splits; ++s) L += ml[2 * s] == -INFINITY ? 0.f : ml[2 * s + 1] * exp2f(ml[2 * s] - M);
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float out = 0;
        for (int s = 0; s < splits; ++s)
            if (ml[2 * s] != -INFINITY) out += part_o[(size_t(bh) * splits + s) * D + d] * exp2f(ml[2 * s] - M);
        o[size_t(bh) * D + d] = L > 0 ? out / L : 0.f;
    }
}

int choose_splits(int BH, int len) {
    const int want_blocks = 4 * attn::sm_count();  // enough blocks to keep every SM streaming
    const int by_blocks = (want_blocks + BH - 1) / BH;
    const int by_length = (len + 255) / 256;       // no split shorter than 256 positions
    return std::max(1, std::min(by_blocks, by_length));
}

template <int D>
void launch_decode(const float* q, const float* k_cache, const float* v_cache, float* o, int BH, int max_seq, int len,
                   int splits) {
    static float* workspace = nullptr;  // partial (O, m, l) of the splits, grown when needed, kept
    static size_t capacity = 0;
    const size_t need = size_t(BH) * splits * (D + 2);
    if (splits > 1 && need > capacity) {
        if (workspace) CUDA_CHECK(cudaFree(workspace));
        CUDA_CHECK(cudaMalloc(&workspace, need * sizeof(float)));
        capacity = need;
    }
    float *part_o = workspace, *part_ml = workspace + size_t(BH) * splits * D;
    const int chunk = (len + splits - 1) / splits;
    decode_kernel<D><<<attn::grid_over_heads(unsigned(splits), BH), kWarps * 32>>>(
        q, k_cache, v_cache, o, part_o, part_ml, max_seq, len, chunk, splits, float(1.4426950408889634 / std::sqrt(double(D))), BH);
    CUDA_CHECK_LAUNCH();
    if (splits > 1) {
        combine_kernel<<<BH, D>>>(part_o, part_ml, o, splits, D);
        CUDA_CHECK_LAUNCH();
    }
}

void decode_attention_with_splits(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H,
                                  int max_seq, int len, int D, int splits) {
    check_head_dim(D, "decode_attention");
    if (len < 1 || len > max_seq)
        throw std::out_of_range("decode_attention: len " + std::to_string(len) + " is outside 1 … max_seq (" +
                                std::to_string(max_seq) + ")");
    if (B * H == 0) return;
    switch (D) {
        case 32: launch_decode<32>(q, k_cache, v_cache, o, B * H, max_seq, len, splits); break;
        case 64: launch_decode<64>(q, k_cache, v_cache, o, B * H, max_seq, len, splits); break;
        case 96: launch_decode<96>(q, k_cache, v_cache, o, B * H, max_seq, len, splits); break;
        default: launch_decode<128>(q, k_cache, v_cache, o, B * H, max_seq, len, splits); break;
    }
}
#else
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
#endif

void decode_attention(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq,
                      int len, int D) {
#if SOLUTION
    decode_attention_with_splits(q, k_cache, v_cache, o, B, H, max_seq, len, D, len >= 1 ? choose_splits(B * H, len) : 1);
#else
    // TODO(task5.2): refuse len < 1 or len > max_seq with std::out_of_range naming both, and a head_dim
    // outside {32, 64, 96, 128} with std::invalid_argument naming it; then launch decode_kernel<D>
    // (a switch over the four D) on B·H blocks of 128 threads, then CUDA_CHECK_LAUNCH().
    (void)q, (void)k_cache, (void)v_cache, (void)o, (void)B, (void)H, (void)max_seq, (void)len, (void)D;
    ATTNLAB_TODO("task5.2");
#endif
}

}  // namespace task5
