// submission_group.cu — Task 5's paged part (5b), the ladder's third rung as a complete submission: one block per
// (sequence, KV head) serving its query heads, 8 at a time, so that each K and V row is read once for up to 8 heads
// (the plan reads it once per head); CUDA cores, no split across blocks (task5_paged/README.md, "The plan"). The
// block's 4 warps take every 4th position, their 32 lanes holding D/32 head dims each; the warps' states are merged
// in shared memory at the end. The append and the checks are the reference's.
// Its GB/s (docs/perf.md): make IMPL=reference BUILD=build/ladder5b-group build/ladder5b-group/bin/bench_task5_paged
//                          "TASK5_SRC=task5/reference/decode.cu task5_paged/ladder/submission_group.cu"
#define paged_decode_bf16 paged_decode_bf16_of_the_reference
#include "task5_paged/reference/paged_decode.cu"
#undef paged_decode_bf16

namespace task5 {
namespace paged_group {

constexpr int kHeads = 8;  // query heads a block serves

template <int D>
__global__ void __launch_bounds__(128) group_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_pages,
                                                   const __nv_bfloat16* v_pages, __nv_bfloat16* o, const int* table,
                                                   const int* lengths, int H_q, int H_kv, int page_size, int pages_per_seq,
                                                   float scale) {
    constexpr int E = D / 32;
    const int b = blockIdx.x / H_kv, kvh = blockIdx.x % H_kv, g = H_q / H_kv, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int head0 = kvh * g + blockIdx.y * kHeads, heads = min(kHeads, g - blockIdx.y * kHeads), L = lengths[b];
    float qv[kHeads][E], acc[kHeads][E] = {}, m[kHeads], l[kHeads];
#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
        m[j] = -INFINITY, l[j] = 0.f;
#pragma unroll
        for (int e = 0; e < E; ++e)
            qv[j][e] = j < heads ? __bfloat162float(q[((size_t)b * H_q + head0 + j) * D + lane * E + e]) * scale : 0.f;
    }
    for (int pos = warp; pos < L; pos += 4) {
        const size_t row = (((size_t)table[(size_t)b * pages_per_seq + pos / page_size] * page_size + pos % page_size) * H_kv + kvh) * D +
                           lane * E;
        float kf[E], vf[E];
#pragma unroll
        for (int e = 0; e < E; ++e) kf[e] = __bfloat162float(k_pages[row + e]), vf[e] = __bfloat162float(v_pages[row + e]);
#pragma unroll
        for (int j = 0; j < kHeads; ++j) {
            float s = 0.f;
#pragma unroll
            for (int e = 0; e < E; ++e) s += qv[j][e] * kf[e];
#pragma unroll
            for (int off = 16; off; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
            const float m_new = fmaxf(m[j], s), alpha = __expf(m[j] - m_new), p = __expf(s - m_new);
            l[j] = l[j] * alpha + p;
#pragma unroll
            for (int e = 0; e < E; ++e) acc[j][e] = acc[j][e] * alpha + p * vf[e];
            m[j] = m_new;
        }
    }
    __shared__ float s_m[4][kHeads], s_l[4][kHeads], s_acc[4][kHeads][D];
#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
        if (lane == 0) s_m[warp][j] = m[j], s_l[warp][j] = l[j];
#pragma unroll
        for (int e = 0; e < E; ++e) s_acc[warp][j][lane * E + e] = acc[j][e];
    }
    __syncthreads();
    for (int c = threadIdx.x; c < heads * D; c += blockDim.x) {  // a warp that saw no position has m = −∞: weight 0
        const int j = c / D, d = c % D;
        float M = -INFINITY, Lsum = 0.f, O = 0.f;
        for (int w = 0; w < 4; ++w) M = fmaxf(M, s_m[w][j]);
        for (int w = 0; w < 4; ++w) {
            const float f = s_m[w][j] == -INFINITY ? 0.f : __expf(s_m[w][j] - M);
            Lsum += s_l[w][j] * f, O += s_acc[w][j][d] * f;
        }
        o[((size_t)b * H_q + head0 + j) * D + d] = __float2bfloat16_rn(O / Lsum);
    }
}

}  // namespace paged_group

void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    using namespace paged_detail;
    check_call("paged_decode_bf16", {B, H_q, H_kv, D, page_size, num_pages, pages_per_seq},
               {{"q", q}, {"k_pages", k_pages}, {"v_pages", v_pages}, {"o", o}}, page_table, lengths, false);
    const int* dev = upload_ints({{page_table, size_t(B) * pages_per_seq}, {lengths, size_t(B)}});
    const dim3 grid(unsigned((long long)B * H_kv), unsigned((H_q / H_kv + paged_group::kHeads - 1) / paged_group::kHeads));
    const float scale = float(1.0 / std::sqrt(double(D)));
    if (D == 64)
        paged_group::group_kernel<64><<<grid, 128>>>(q, k_pages, v_pages, o, dev, dev + size_t(B) * pages_per_seq, H_q, H_kv,
                                                     page_size, pages_per_seq, scale);
    else
        paged_group::group_kernel<128><<<grid, 128>>>(q, k_pages, v_pages, o, dev, dev + size_t(B) * pages_per_seq, H_q, H_kv,
                                                      page_size, pages_per_seq, scale);
    CUDA_CHECK_LAUNCH();
}

}  // namespace task5
