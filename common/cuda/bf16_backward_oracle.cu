// bf16_backward_oracle.cu — see bf16_backward_oracle.h. Plain on purpose: per slice of heads, five batched cuBLAS GEMMs
// (S = Q·Kᵀ/√D, dP = dO·Vᵀ, dV = Pᵀ·dO, dK = dSᵀ·Q/√D, dQ = dS·K/√D) and one kernel a row between them (P, D_i, dS).
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bf16_backward_oracle.h"
#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"

namespace attn {
namespace {

constexpr int kThreads = 256;

// Row i of one head (blockIdx.x over the slice's rows): P_ij = exp(s_ij − lse_i) where key j is visible (in `p`, which
// holds the scaled scores), D_i = Σ_d dO_id·O_id, dS_ij = P_ij·(dP_ij − D_i) (in `ds`, which holds dP).
__global__ void row_kernel(float* p, float* ds, const float* lse, const float* dout, const float* o, int Sq, int Sk, int D,
                           bool causal) {
    __shared__ float red[kThreads / 32];
    const size_t row = blockIdx.x;
    const int i = int(row % Sq);
    const long last_visible = causal ? long(i) + Sk - Sq : long(Sk) - 1;
    float d = 0;
    for (int c = threadIdx.x; c < D; c += kThreads) d += dout[row * D + c] * o[row * D + c];
    for (int off = 16; off > 0; off >>= 1) d += __shfl_xor_sync(0xffffffff, d, off);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = d;
    __syncthreads();
    d = 0;
    for (int w = 0; w < kThreads / 32; ++w) d += red[w];
    const float l = lse[row];
    float *pr = p + row * Sk, *dsr = ds + row * Sk;
    for (int j = threadIdx.x; j < Sk; j += kThreads) {
        const float pj = (j <= last_visible && l != INFINITY) ? expf(pr[j] - l) : 0.0f;
        pr[j] = pj, dsr[j] = pj * (dsr[j] - d);
    }
}

template <class T>
T* kept(DeviceBuffer<T>& b, size_t n) {  // device buffers kept between the checks of one shape
    if (b.size() < n) b = DeviceBuffer<T>(n);
    return b.get();
}

}  // namespace

void attention_backward_from_lse(CublasGemm& gemm, const float* q, const float* k, const float* v, const float* o,
                                 const float* dout, const float* lse, float* dq, float* dk, float* dv, int BH, int Sq, int Sk,
                                 int D, bool causal) {
    const size_t scores = size_t(Sq) * Sk;
    const int chunk = heads_per_gb_of_scores(BH, Sq, Sk);
    static DeviceBuffer<float> p_kept, ds_kept;  // up to 1 GB each: kept, not allocated again for every checked call
    float *p = kept(p_kept, size_t(chunk) * scores), *ds = kept(ds_kept, size_t(chunk) * scores);
    const float scale = 1.0f / std::sqrt(float(D));
    for (int h = 0; h < BH; h += chunk) {
        const int n = std::min(chunk, BH - h);
        const size_t qo = size_t(h) * Sq * D, kv = size_t(h) * Sk * D;
        gemm.nt(q + qo, k + kv, p, n, Sq, Sk, D, scale);        // S, scaled
        gemm.nt(dout + qo, v + kv, ds, n, Sq, Sk, D);           // dP
        row_kernel<<<unsigned(size_t(n) * Sq), kThreads>>>(p, ds, lse + size_t(h) * Sq, dout + qo, o + qo, Sq, Sk, D, causal);
        CUDA_CHECK_LAUNCH();
        gemm.tn(p, dout + qo, dv + kv, n, Sk, D, Sq);           // dV = Pᵀ·dO
        gemm.tn(ds, q + qo, dk + kv, n, Sk, D, Sq, scale);      // dK = dSᵀ·Q/√D
        gemm.nn(ds, k + kv, dq + qo, n, Sq, D, Sk, scale);      // dQ = dS·K/√D
    }
}

std::vector<Digest> bf16_backward_oracle_digests(CublasGemm& gemm, const task4::bf16_backward_timed::Geometry& g, uint64_t seed,
                                                 const std::function<uint64_t(int)>& sign_seed) {
    namespace timed = task4::bf16_backward_timed;
    static DeviceBuffer<uint16_t> raw;
    static DeviceBuffer<float> in[5], grads[3], lse;
    const size_t n = g.elements();
    const uint64_t seeds[5] = {seed, seed + 1, seed + 2, timed::o_seed(seed), timed::dout_seed(seed)};  // q, k, v, o, dout
    for (int t = 0; t < 5; ++t) {
        fill_normal_bf16(kept(raw, n), n, seeds[t]);
        task4::bf16_convert::from_bf16(reinterpret_cast<const __nv_bfloat16*>(raw.get()), kept(in[t], n), n);
    }
    const std::vector<float> l = timed::lse(g);
    CUDA_CHECK(cudaMemcpy(kept(lse, l.size()), l.data(), l.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (auto& b : grads) kept(b, n);
    attention_backward_from_lse(gemm, in[0].get(), in[1].get(), in[2].get(), in[3].get(), in[4].get(), lse.get(), grads[0].get(),
                                grads[1].get(), grads[2].get(), g.B * g.H, g.S, g.S, g.D, g.causal);
    return {digest(grads[0].get(), n, sign_seed(0)), digest(grads[1].get(), n, sign_seed(1)), digest(grads[2].get(), n, sign_seed(2))};
}

}  // namespace attn
