// paged_oracle.cu — see paged_oracle.h. Plain on purpose: one thread per gathered element, then the oracles.
#include <cuda_bf16.h>

#include <algorithm>
#include <memory>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/paged_oracle.h"

namespace attn {
namespace {

// out[((b·H_q + h)·L + pos)·D + d] = pool[((table[b·pps + pos / ps]·ps + pos % ps)·H_kv + h / g)·D + d]
__global__ void gather_pages_kernel(const __nv_bfloat16* pool, const int* table, float* out, int H_q, int H_kv, int L, int D,
                                    int page_size, int pages_per_seq, size_t n) {
    const int g = H_q / H_kv;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const int d = int(i % D);
        const size_t rest = i / D;
        const int pos = int(rest % L);
        const size_t bh = rest / L;
        const int h = int(bh % H_q), b = int(bh / H_q);
        const int page = table[size_t(b) * pages_per_seq + pos / page_size];
        out[i] = __bfloat162float(pool[((size_t(page) * page_size + pos % page_size) * H_kv + h / g) * D + d]);
    }
}

// dst row dest[r] ← src row r (rows of `width` elements): the rows a step writes, put where the pages hold them.
__global__ void scatter_rows_kernel(const __nv_bfloat16* src, __nv_bfloat16* dst, const int* dest, int width, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        dst[size_t(dest[i / width]) * width + i % width] = src[i];
}

// out[(h·S + s)·D + d] = in[(s·H_in + h / g)·D + d] as floats, g = H_out / H_in: token-major bf16 to heads-first,
// each input head repeated for its g query heads.
__global__ void tokens_to_heads_kernel(const __nv_bfloat16* in, float* out, int S, int H_in, int H_out, int D, size_t n) {
    const int g = H_out / H_in;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const int d = int(i % D), s = int(i / D % S), h = int(i / (size_t(D) * S));
        out[i] = __bfloat162float(in[(size_t(s) * H_in + h / g) * D + d]);
    }
}

// out[(s·H + h)·D + d] = in[(h·S + s)·D + d]: heads-first back to token-major.
__global__ void heads_to_tokens_kernel(const float* in, float* out, int S, int H, int D, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const int d = int(i % D), h = int(i / D % H), s = int(i / (size_t(D) * H));
        out[i] = in[(size_t(h) * S + s) * D + d];
    }
}

unsigned grid_for(size_t n) { return unsigned(n / 256 + 1 < 65536 ? n / 256 + 1 : 65536); }

// Device buffers kept between the calls of one shape (each check would otherwise allocate gigabytes).
template <class T>
T* kept(DeviceBuffer<T>& b, size_t n) {
    if (b.size() < n) b = DeviceBuffer<T>(n);
    return b.get();
}

}  // namespace

Digest paged_decode_oracle_digest(const task5::timed::Geometry& g, uint64_t seed, uint64_t sign_seed) {
    static DeviceBuffer<uint16_t> q16, k16, v16;
    static DeviceBuffer<float> q, k, v, o;
    static DeviceBuffer<double> scores;
    static DeviceBuffer<int> table;
    const size_t nq = g.q_elements(), np = g.pool_elements(), nc = size_t(g.B) * g.H_q * g.L * g.D;
    fill_normal_bf16(kept(q16, nq), nq, seed), fill_normal_bf16(kept(k16, np), np, seed + 1), fill_normal_bf16(kept(v16, np), np, seed + 2);
    const std::vector<int> t = task5::timed::page_table(g, seed);
    int* dt = kept(table, t.size());
    CUDA_CHECK(cudaMemcpy(dt, t.data(), t.size() * sizeof(int), cudaMemcpyHostToDevice));
    auto bf16 = [](DeviceBuffer<uint16_t>& b) { return reinterpret_cast<const __nv_bfloat16*>(b.get()); };
    task4::bf16_convert::from_bf16(bf16(q16), kept(q, nq), nq);
    gather_pages_kernel<<<grid_for(nc), 256>>>(bf16(k16), dt, kept(k, nc), g.H_q, g.H_kv, g.L, g.D, g.page_size, g.pages_per_seq(), nc);
    gather_pages_kernel<<<grid_for(nc), 256>>>(bf16(v16), dt, kept(v, nc), g.H_q, g.H_kv, g.L, g.D, g.page_size, g.pages_per_seq(), nc);
    CUDA_CHECK_LAUNCH();
    decode_oracle(q.get(), k.get(), v.get(), kept(o, nq), g.B * g.H_q, g.L, g.L, g.D, kept(scores, size_t(g.B) * g.H_q * g.L));
    return digest(o.get(), nq, sign_seed);
}

std::vector<Digest> serve_step_oracle_digests(CublasGemm& gemm, const task6::timed::Step& g, uint64_t seed,
                                              const std::function<uint64_t(int)>& sign_seed) {
    static DeviceBuffer<uint16_t> k_pool, v_pool, q_prompt, k_prompt, v_prompt, q_step, k_step, v_step;
    static DeviceBuffer<float> q, k, v, o, o_tokens, scores;
    static DeviceBuffer<double> decode_scores;
    static DeviceBuffer<int> rows, tables;
    const task6::timed::Seeds s = task6::timed::seeds(seed);
    const int S = g.prompt, ps = g.page_size, width = g.H_kv * g.D;
    const size_t np = g.pool_elements(), nqp = g.prompt_q_elements(), nkp = g.prompt_kv_elements();
    const size_t nqs = g.step_q_elements(), nks = g.step_kv_elements();
    fill_normal_bf16(kept(k_pool, np), np, s.k_pool), fill_normal_bf16(kept(v_pool, np), np, s.v_pool);
    fill_normal_bf16(kept(q_prompt, nqp), nqp, s.q_prompt), fill_normal_bf16(kept(k_prompt, nkp), nkp, s.k_prompt);
    fill_normal_bf16(kept(v_prompt, nkp), nkp, s.v_prompt), fill_normal_bf16(kept(q_step, nqs), nqs, s.q_step);
    fill_normal_bf16(kept(k_step, nks), nks, s.k_step), fill_normal_bf16(kept(v_step, nks), nks, s.v_step);
    auto bf16 = [](DeviceBuffer<uint16_t>& b) { return reinterpret_cast<__nv_bfloat16*>(b.get()); };

    // The pools as the step leaves them: the prompt's rows in the newcomer's pages, then each row's new K and V.
    const std::vector<std::vector<int>> pages = task6::timed::pages(g, seed);
    auto slot = [&](int b, int pos) { return pages[size_t(b)][size_t(pos / ps)] * ps + pos % ps; };
    std::vector<int> dest;  // the prompt's positions 0 … S − 1, then the step's rows 0 … B
    for (int p = 0; p < S; ++p) dest.push_back(slot(g.B, p));
    for (int b = 0; b < g.rows(); ++b) dest.push_back(slot(b, g.length_after(b) - 1));
    int* d_dest = kept(rows, dest.size());
    CUDA_CHECK(cudaMemcpy(d_dest, dest.data(), dest.size() * sizeof(int), cudaMemcpyHostToDevice));
    scatter_rows_kernel<<<grid_for(nkp), 256>>>(bf16(k_prompt), bf16(k_pool), d_dest, width, nkp);
    scatter_rows_kernel<<<grid_for(nkp), 256>>>(bf16(v_prompt), bf16(v_pool), d_dest, width, nkp);
    scatter_rows_kernel<<<grid_for(nks), 256>>>(bf16(k_step), bf16(k_pool), d_dest + S, width, nks);
    scatter_rows_kernel<<<grid_for(nks), 256>>>(bf16(v_step), bf16(v_pool), d_dest + S, width, nks);
    CUDA_CHECK_LAUNCH();

    // The prefill: causal attention over the prompt, heads-first, in slices of at most 1 GB of scores.
    tokens_to_heads_kernel<<<grid_for(nqp), 256>>>(bf16(q_prompt), kept(q, nqp), S, g.H_q, g.H_q, g.D, nqp);
    tokens_to_heads_kernel<<<grid_for(nqp), 256>>>(bf16(k_prompt), kept(k, nqp), S, g.H_kv, g.H_q, g.D, nqp);
    tokens_to_heads_kernel<<<grid_for(nqp), 256>>>(bf16(v_prompt), kept(v, nqp), S, g.H_kv, g.H_q, g.D, nqp);
    CUDA_CHECK_LAUNCH();
    sliced_attention_oracle(gemm, q.get(), k.get(), v.get(), kept(o, nqp), g.H_q, S, g.D, /*causal=*/true, scores);
    heads_to_tokens_kernel<<<grid_for(nqp), 256>>>(o.get(), kept(o_tokens, nqp), S, g.H_q, g.D, nqp);
    CUDA_CHECK_LAUNCH();
    std::vector<Digest> out = {digest(o_tokens.get(), nqp, sign_seed(0))};

    // The decode step: row b's query heads over its sequence's length_after(b) positions, gathered from its pages.
    std::vector<int> table;  // every row's pages, one row after another
    std::vector<size_t> first;
    for (const std::vector<int>& p : pages) first.push_back(table.size()), table.insert(table.end(), p.begin(), p.end());
    int* d_table = kept(tables, table.size());
    CUDA_CHECK(cudaMemcpy(d_table, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
    float* q_rows = kept(q, std::max(nqp, nqs));  // the prefill's buffers are free again
    task4::bf16_convert::from_bf16(bf16(q_step), q_rows, nqs);
    float* o_rows = kept(o, std::max(nqp, nqs));
    for (int b = 0; b < g.rows(); ++b) {
        const int L = g.length_after(b);
        const size_t nc = size_t(g.H_q) * L * g.D, row = size_t(b) * g.H_q * g.D;
        gather_pages_kernel<<<grid_for(nc), 256>>>(bf16(k_pool), d_table + first[size_t(b)], kept(k, nc), g.H_q, g.H_kv, L, g.D, ps,
                                                   g.pages_of(b), nc);
        gather_pages_kernel<<<grid_for(nc), 256>>>(bf16(v_pool), d_table + first[size_t(b)], kept(v, nc), g.H_q, g.H_kv, L, g.D, ps,
                                                   g.pages_of(b), nc);
        CUDA_CHECK_LAUNCH();
        decode_oracle(q_rows + row, k.get(), v.get(), o_rows + row, g.H_q, L, L, g.D, kept(decode_scores, size_t(g.H_q) * L));
    }
    out.push_back(digest(o_rows, nqs, sign_seed(1)));
    return out;
}

}  // namespace attn
