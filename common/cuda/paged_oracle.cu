// paged_oracle.cu — see paged_oracle.h. Plain on purpose: one thread per gathered element, then decode_oracle.
#include <cuda_bf16.h>

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

}  // namespace attn
