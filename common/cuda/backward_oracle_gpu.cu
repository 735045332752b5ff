// backward_oracle_gpu.cu — the GPU side of backward_oracle.h: one head at a time, P and dS of the whole head materialised
// in float64 (2·Sq·Sk doubles), one block per query row for lse, P, O, D_i, dS and dQ, one block per key for dK and dV.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/backward_oracle.h"

namespace task4 {
namespace {

constexpr int THREADS = 128, MAX_D = 128;

// The block's sum (or max) of x, returned to every thread; every thread must call it.
__device__ double block_reduce(double x, double* red, bool is_max) {
    for (int off = 16; off > 0; off >>= 1) {
        const double y = __shfl_xor_sync(0xffffffff, x, off);
        x = is_max ? fmax(x, y) : x + y;
    }
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = x;
    __syncthreads();
    double r = red[0];
    for (int w = 1; w < THREADS / 32; ++w) r = is_max ? fmax(r, red[w]) : r + red[w];
    __syncthreads();  // red is free again
    return r;
}

// Query row i (blockIdx.x) of one head: s_j, lse, P_ij into P[i][·], O_i, dP_ij, D_i, dS_ij into S[i][·], dQ_i.
__global__ void __launch_bounds__(THREADS) row_kernel(const float* q, const float* k, const float* v, const float* dout,
                                                      float* o, float* lse, float* dq, double* P, double* S, int Sq, int Sk,
                                                      int D, bool causal) {
    __shared__ double qi[MAX_D], gi[MAX_D], red[THREADS / 32];
    const int i = blockIdx.x, tid = threadIdx.x;
    for (int d = tid; d < D; d += THREADS) qi[d] = q[size_t(i) * D + d], gi[d] = dout[size_t(i) * D + d];
    __syncthreads();
    const int visible = causal ? min(max(i + Sk - Sq + 1, 0), Sk) : Sk;
    const double scale = 1.0 / sqrt(double(D));
    double* Pi = P + size_t(i) * Sk;
    double* Si = S + size_t(i) * Sk;
    double mx = -INFINITY;
    for (int j = tid; j < Sk; j += THREADS) {
        double s = -INFINITY;
        if (j < visible) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += qi[d] * double(k[size_t(j) * D + d]);
            s = dot * scale;
        }
        Pi[j] = s;
        mx = fmax(mx, s);
    }
    mx = block_reduce(mx, red, true);
    if (mx == -INFINITY) {  // the row sees no key (the same for every thread)
        for (int j = tid; j < Sk; j += THREADS) Pi[j] = 0, Si[j] = 0;
        for (int d = tid; d < D; d += THREADS) o[size_t(i) * D + d] = 0.0f, dq[size_t(i) * D + d] = 0.0f;
        if (tid == 0) lse[i] = INFINITY;
        return;
    }
    double sum = 0;
    for (int j = tid; j < visible; j += THREADS) sum += exp(Pi[j] - mx);  // the j this thread wrote
    const double l = mx + log(block_reduce(sum, red, false));
    double delta = 0;
    for (int j = tid; j < Sk; j += THREADS) {
        double p = 0, dp = 0;
        if (j < visible) {
            p = exp(Pi[j] - l);
            for (int d = 0; d < D; ++d) dp += gi[d] * double(v[size_t(j) * D + d]);
        }
        Pi[j] = p, Si[j] = dp;
        delta += p * dp;
    }
    delta = block_reduce(delta, red, false);
    for (int j = tid; j < Sk; j += THREADS) Si[j] = Pi[j] * (Si[j] - delta);
    __syncthreads();  // the row's P and dS, written by every thread, are visible to the block
    for (int d = tid; d < D; d += THREADS) {
        double oa = 0, qa = 0;
        for (int j = 0; j < visible; ++j) oa += Pi[j] * double(v[size_t(j) * D + d]), qa += Si[j] * double(k[size_t(j) * D + d]);
        o[size_t(i) * D + d] = float(oa);
        dq[size_t(i) * D + d] = float(qa * scale);
    }
    if (tid == 0) lse[i] = float(l);
}

// Key j (blockIdx.x) of one head: dK_j = Σ_i dS_ij·q_i/√D, dV_j = Σ_i P_ij·dO_i.
__global__ void __launch_bounds__(THREADS) key_kernel(const float* q, const float* dout, const double* P, const double* S,
                                                      float* dk, float* dv, int Sq, int Sk, int D) {
    const int j = blockIdx.x;
    const double scale = 1.0 / sqrt(double(D));
    for (int d = threadIdx.x; d < D; d += THREADS) {
        double ka = 0, va = 0;
        for (int i = 0; i < Sq; ++i) {
            ka += S[size_t(i) * Sk + j] * double(q[size_t(i) * D + d]);
            va += P[size_t(i) * Sk + j] * double(dout[size_t(i) * D + d]);
        }
        dk[size_t(j) * D + d] = float(ka * scale);
        dv[size_t(j) * D + d] = float(va);
    }
}

// lse of every row in float32, one warp a row, the plainest way (a benchmark's input for the heads it does not check).
__global__ void lse_kernel(const float* q, const float* k, float* lse, int Sq, int Sk, int D, bool causal, float scale,
                           long long rows) {
    const long long row = blockIdx.x * 8LL + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const long long head = row / Sq;
    const int i = int(row % Sq), visible = causal ? min(max(i + Sk - Sq + 1, 0), Sk) : Sk;
    const float* qr = q + row * D;
    const float* kh = k + head * Sk * D;
    float m = -INFINITY, l = 0.0f;
    for (int j = lane; j < visible; j += 32) {
        float x = 0.0f;
        for (int d = 0; d < D; ++d) x += qr[d] * kh[size_t(j) * D + d];
        x *= scale;
        const float m2 = fmaxf(m, x);
        l = l * expf(m - m2) + expf(x - m2), m = m2;
    }
    for (int off = 16; off > 0; off /= 2) {
        const float m_o = __shfl_xor_sync(0xffffffffu, m, off), l_o = __shfl_xor_sync(0xffffffffu, l, off), m2 = fmaxf(m, m_o);
        if (m2 != -INFINITY) l = (m == -INFINITY ? 0.0f : l * expf(m - m2)) + (m_o == -INFINITY ? 0.0f : l_o * expf(m_o - m2));
        m = m2;
    }
    if (lane == 0) lse[row] = m == -INFINITY ? INFINITY : m + logf(l);
}

}  // namespace

void attention_backward_f64_gpu(const float* q, const float* k, const float* v, const float* dout, float* o, float* lse,
                                float* dq, float* dk, float* dv, int BH, int Sq, int Sk, int D, bool causal) {
    if (D > MAX_D || D <= 0 || Sq <= 0 || Sk <= 0 || BH <= 0) throw std::invalid_argument("attention_backward_f64_gpu: bad shape");
    attn::DeviceBuffer<double> P(size_t(Sq) * Sk), S(size_t(Sq) * Sk);
    for (int bh = 0; bh < BH; ++bh) {
        const size_t qo = size_t(bh) * Sq * D, ko = size_t(bh) * Sk * D;
        row_kernel<<<Sq, THREADS>>>(q + qo, k + ko, v + ko, dout + qo, o + qo, lse + size_t(bh) * Sq, dq + qo, P.get(), S.get(),
                                    Sq, Sk, D, causal);
        CUDA_CHECK_LAUNCH();
        key_kernel<<<Sk, THREADS>>>(q + qo, dout + qo, P.get(), S.get(), dk + ko, dv + ko, Sq, Sk, D);
        CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
}

void attention_lse_f32_gpu(const float* q, const float* k, float* lse, int BH, int Sq, int Sk, int D, bool causal) {
    const long long rows = (long long)BH * Sq;
    lse_kernel<<<unsigned((rows + 7) / 8), 256>>>(q, k, lse, Sq, Sk, D, causal, float(1.0 / std::sqrt(double(D))), rows);
    CUDA_CHECK_LAUNCH();
}

}  // namespace task4
