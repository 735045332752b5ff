// submission_plan.cu — Task 5's paged part (5b), the skeleton's plan done (the first rung of the ladder in
// task5_paged/README.md), as a complete submission: one warp per (sequence, query head) walks its sequence's positions
// page by page, its 32 lanes holding D/32 head dims each; the dot product is summed across the warp, the online
// softmax and the output kept in float32. The append and the checks are the reference's.
// Its GB/s (docs/perf.md): make IMPL=reference BUILD=build/ladder5b build/ladder5b/bin/bench_task5_paged
//                          "TASK5_SRC=task5/reference/decode.cu task5_paged/ladder/submission_plan.cu"
#define paged_decode_bf16 paged_decode_bf16_of_the_reference
#include "task5_paged/reference/paged_decode.cu"
#undef paged_decode_bf16

namespace task5 {
namespace paged_plan {

template <int D>
__global__ void warp_per_head_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                                     __nv_bfloat16* o, const int* table, const int* lengths, int B, int H_q, int H_kv,
                                     int page_size, int pages_per_seq, float scale) {
    constexpr int E = D / 32;  // head dims a lane holds: 2 or 4 bf16, one 4- or 8-byte load
    const long long w = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (w >= (long long)B * H_q) return;
    const int b = int(w / H_q), h = int(w % H_q), kvh = h / (H_q / H_kv), L = lengths[b];
    float qv[E], acc[E] = {};
    for (int e = 0; e < E; ++e) qv[e] = __bfloat162float(q[w * D + lane * E + e]);
    float m = -INFINITY, l = 0.f;
    for (int pos = 0; pos < L; ++pos) {
        const size_t row = (((size_t)table[(size_t)b * pages_per_seq + pos / page_size] * page_size + pos % page_size) * H_kv + kvh) * D +
                           lane * E;
        float s = 0.f;
        for (int e = 0; e < E; ++e) s += qv[e] * __bfloat162float(k_pages[row + e]);
        for (int off = 16; off; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
        s *= scale;
        const float m_new = fmaxf(m, s), alpha = __expf(m - m_new), p = __expf(s - m_new);
        l = l * alpha + p;
        for (int e = 0; e < E; ++e) acc[e] = acc[e] * alpha + p * __bfloat162float(v_pages[row + e]);
        m = m_new;
    }
    for (int e = 0; e < E; ++e) o[w * D + lane * E + e] = __float2bfloat16_rn(acc[e] / l);
}

}  // namespace paged_plan

void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    using namespace paged_detail;
    const char* fn = "paged_decode_bf16";
    check_call(fn, {B, H_q, H_kv, D, page_size, num_pages, pages_per_seq}, {{"q", q}, {"k_pages", k_pages}, {"v_pages", v_pages}, {"o", o}},
               page_table, lengths, false);
    const int* dev = upload_ints({{page_table, size_t(B) * pages_per_seq}, {lengths, size_t(B)}});
    const long long warps = (long long)B * H_q;
    const unsigned blocks = unsigned((warps + 3) / 4);
    const float scale = float(1.0 / std::sqrt(double(D)));
    if (D == 64)
        paged_plan::warp_per_head_kernel<64><<<blocks, 128>>>(q, k_pages, v_pages, o, dev, dev + size_t(B) * pages_per_seq, B, H_q,
                                                             H_kv, page_size, pages_per_seq, scale);
    else
        paged_plan::warp_per_head_kernel<128><<<blocks, 128>>>(q, k_pages, v_pages, o, dev, dev + size_t(B) * pages_per_seq, B,
                                                              H_q, H_kv, page_size, pages_per_seq, scale);
    CUDA_CHECK_LAUNCH();
}

}  // namespace task5
