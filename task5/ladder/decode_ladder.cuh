// decode_ladder.cuh — Task 5's optimisation ladder (course staff material, not in the student kit):
// decode attention written the ways a student climbs, each a complete, correct kernel.
//
//   plan       one block of 4 warps per (batch, head). A warp takes one cache position at a time
//              (warp w: positions w, w+4, …); lane l holds head dims l, l+32, … of q and of its
//              running output, so a warp reads a whole K or V row in one coalesced request. The dot
//              product is summed across the warp with __shfl_xor_sync; each warp keeps its own
//              online softmax (m, l, o) and the block merges the four in shared memory at the end.
//   split-KV   the same kernel on several blocks per (batch, head), each over a slice of the
//              positions; a second kernel merges their partial (m, l, o) (FlashDecoding). With B·H
//              = 32 one block per head leaves 100 of 132 SMs idle.
//   reference  task5/reference/decode.cu: eight lanes per position, float4 loads, four positions
//              of K and V in flight per warp before any arithmetic needs them.
//
// Build and run (staff):  make ladder-task5 IMPL=reference   (build/reference/bin/ladder_task5)
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"

namespace task5_ladder {

constexpr int kWarps = 4;

template <int D>
__global__ void __launch_bounds__(kWarps * 32) warp_per_position_kernel(const float* q, const float* k_cache,
                                                                       const float* v_cache, float* o, float* part,
                                                                       int max_seq, int len, int chunk, int splits,
                                                                       float scale_log2) {
    constexpr int PER_LANE = D / 32;
    __shared__ float s_acc[kWarps][D], s_m[kWarps], s_l[kWarps];
    const int split = blockIdx.x, bh = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float qv[PER_LANE], acc[PER_LANE];
#pragma unroll
    for (int c = 0; c < PER_LANE; ++c) qv[c] = q[size_t(bh) * D + lane + 32 * c] * scale_log2, acc[c] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    const int start = split * chunk, end = min(len, start + chunk);
    for (int j = start + warp; j < end; j += kWarps) {
        const float* krow = k_cache + (size_t(bh) * max_seq + j) * D;
        const float* vrow = v_cache + (size_t(bh) * max_seq + j) * D;
        float s = 0.0f;
#pragma unroll
        for (int c = 0; c < PER_LANE; ++c) s += qv[c] * krow[lane + 32 * c];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
        const float m_new = fmaxf(m, s), alpha = exp2f(m - m_new), p = exp2f(s - m_new);
        l = l * alpha + p;
        m = m_new;
#pragma unroll
        for (int c = 0; c < PER_LANE; ++c) acc[c] = acc[c] * alpha + p * vrow[lane + 32 * c];
    }
#pragma unroll
    for (int c = 0; c < PER_LANE; ++c) s_acc[warp][lane + 32 * c] = acc[c];
    if (lane == 0) s_m[warp] = m, s_l[warp] = l;
    __syncthreads();
    float M = -INFINITY, L = 0.0f;
    for (int w = 0; w < kWarps; ++w) M = fmaxf(M, s_m[w]);
    for (int w = 0; w < kWarps; ++w) L += s_m[w] == -INFINITY ? 0.0f : s_l[w] * exp2f(s_m[w] - M);
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float out = 0.0f;
        for (int w = 0; w < kWarps; ++w)
            if (s_m[w] != -INFINITY) out += s_acc[w][d] * exp2f(s_m[w] - M);
        if (splits == 1) {
            o[size_t(bh) * D + d] = L > 0.0f ? out / L : 0.0f;
        } else {
            float* mine = part + (size_t(bh) * splits + split) * (D + 2);  // [o (D), m, l] per split
            mine[d] = out;
            if (d == 0) mine[D] = M, mine[D + 1] = L;
        }
    }
}

// One block per (batch, head): o = Σ_s o_s·2^(m_s − M) / Σ_s l_s·2^(m_s − M).
template <int D>
__global__ void merge_splits_kernel(const float* part, float* o, int splits) {
    const float* p = part + size_t(blockIdx.x) * splits * (D + 2);
    float M = -INFINITY, L = 0.0f;
    for (int s = 0; s < splits; ++s) M = fmaxf(M, p[s * (D + 2) + D]);
    for (int s = 0; s < splits; ++s) {
        const float ms = p[s * (D + 2) + D];
        if (ms != -INFINITY) L += p[s * (D + 2) + D + 1] * exp2f(ms - M);
    }
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float out = 0.0f;
        for (int s = 0; s < splits; ++s) {
            const float ms = p[s * (D + 2) + D];
            if (ms != -INFINITY) out += p[s * (D + 2) + d] * exp2f(ms - M);
        }
        o[size_t(blockIdx.x) * D + d] = L > 0.0f ? out / L : 0.0f;
    }
}

// Splits so that the grid holds about 4 blocks per SM, none shorter than 256 positions.
inline int splits_for(int BH, int len) {
    const int sms = attn::sm_count();
    return std::max(1, std::min((4 * sms + BH - 1) / BH, (len + 255) / 256));
}

template <int D>
void launch(const float* q, const float* k_cache, const float* v_cache, float* o, int BH, int max_seq, int len, int splits) {
    static float* part = nullptr;
    static size_t capacity = 0;
    const size_t need = size_t(BH) * splits * (D + 2);
    if (splits > 1 && need > capacity) {
        if (part) CUDA_CHECK(cudaFree(part));
        CUDA_CHECK(cudaMalloc(&part, need * sizeof(float)));
        capacity = need;
    }
    const int chunk = (len + splits - 1) / splits;
    warp_per_position_kernel<D><<<dim3(splits, BH), kWarps * 32>>>(q, k_cache, v_cache, o, part, max_seq, len, chunk, splits,
                                                                  float(1.4426950408889634 / std::sqrt(double(D))));
    CUDA_CHECK_LAUNCH();
    if (splits > 1) {
        merge_splits_kernel<D><<<BH, D>>>(part, o, splits);
        CUDA_CHECK_LAUNCH();
    }
}

// Task 5's decode_attention with the warp-per-position kernel; split_kv: more than one block per head.
inline void decode(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq, int len,
                   int D, bool split_kv) {
    if (D != 32 && D != 64 && D != 96 && D != 128)
        throw std::invalid_argument("decode_attention: head_dim " + std::to_string(D) + " is not supported (32, 64, 96 or 128)");
    if (len < 1 || len > max_seq)
        throw std::out_of_range("decode_attention: len " + std::to_string(len) + " is outside 1 … max_seq (" +
                                std::to_string(max_seq) + ")");
    const int BH = B * H;
    if (BH == 0) return;
    const int splits = split_kv ? splits_for(BH, len) : 1;
    switch (D) {
        case 32: launch<32>(q, k_cache, v_cache, o, BH, max_seq, len, splits); break;
        case 64: launch<64>(q, k_cache, v_cache, o, BH, max_seq, len, splits); break;
        case 96: launch<96>(q, k_cache, v_cache, o, BH, max_seq, len, splits); break;
        default: launch<128>(q, k_cache, v_cache, o, BH, max_seq, len, splits); break;
    }
}


}  // namespace task5_ladder
