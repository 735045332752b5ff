// naive_backward.cu — rung 1 of the backward's ladder (course staff material): the backward written the first way that
// comes to mind, recomputing everything. One thread per query row computes D_i = dO_i·O_i and walks the keys for dQ_i;
// one thread per key walks the query rows for dK_j and dV_j, recomputing s_ij, P_ij = exp(s_ij − lse_i), dP_ij and D_i
// on the way. D is known only at run time, so each thread's rows live in local memory, and every product is a loop over
// global memory. Nothing of size Sq × Sk is stored. Also the list of rungs (ladder_backward.h).
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "task4_backward/task4_backward.h"
#include "task4_backward/ladder/ladder_backward.h"

namespace task4::ladder_backward {
namespace {

constexpr int THREADS = 128;

__device__ float dot(const float* a, const float* b, int D) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s = fmaf(a[d], b[d], s);
    return s;
}

__global__ void __launch_bounds__(THREADS) dq_rows(const float* q, const float* k, const float* v, const float* o,
                                                   const float* dout, const float* lse, float* dq, int Sq, int Sk, int D,
                                                   bool causal, float scale) {
    const int i = blockIdx.x * THREADS + threadIdx.x;
    if (i >= Sq) return;
    const size_t bh = blockIdx.y;
    const float *qi = q + (bh * Sq + i) * D, *gi = dout + (bh * Sq + i) * D, *K = k + bh * Sk * D, *V = v + bh * Sk * D;
    const float li = lse[bh * Sq + i], di = dot(gi, o + (bh * Sq + i) * D, D);
    const int visible = causal ? min(max(i + Sk - Sq + 1, 0), Sk) : Sk;
    float acc[128];
    for (int d = 0; d < D; ++d) acc[d] = 0.0f;
    for (int j = 0; j < visible; ++j) {
        const float p = expf(dot(qi, K + size_t(j) * D, D) * scale - li);
        const float ds = p * (dot(gi, V + size_t(j) * D, D) - di);
        for (int d = 0; d < D; ++d) acc[d] = fmaf(ds, K[size_t(j) * D + d], acc[d]);
    }
    for (int d = 0; d < D; ++d) dq[(bh * Sq + i) * D + d] = acc[d] * scale;
}

__global__ void __launch_bounds__(THREADS) dkdv_keys(const float* q, const float* k, const float* v, const float* o,
                                                     const float* dout, const float* lse, float* dk, float* dv, int Sq, int Sk,
                                                     int D, bool causal, float scale) {
    const int j = blockIdx.x * THREADS + threadIdx.x;
    if (j >= Sk) return;
    const size_t bh = blockIdx.y;
    const float *kj = k + (bh * Sk + j) * D, *vj = v + (bh * Sk + j) * D;
    float ka[128], va[128];
    for (int d = 0; d < D; ++d) ka[d] = 0.0f, va[d] = 0.0f;
    for (int i = causal ? max(0, j - (Sk - Sq)) : 0; i < Sq; ++i) {
        const float *qi = q + (bh * Sq + i) * D, *gi = dout + (bh * Sq + i) * D;
        const float p = expf(dot(qi, kj, D) * scale - lse[bh * Sq + i]);
        const float ds = p * (dot(gi, vj, D) - dot(gi, o + (bh * Sq + i) * D, D));
        for (int d = 0; d < D; ++d) ka[d] = fmaf(ds, qi[d], ka[d]), va[d] = fmaf(p, gi[d], va[d]);
    }
    for (int d = 0; d < D; ++d) dk[(bh * Sk + j) * D + d] = ka[d] * scale, dv[(bh * Sk + j) * D + d] = va[d];
}

}  // namespace

void naive_backward(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse,
                    float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
    if (D != 32 && D != 64 && D != 96 && D != 128) throw std::invalid_argument("naive_backward: head_dim " + std::to_string(D));
    const float scale = float(1.0 / std::sqrt(double(D)));
    dq_rows<<<dim3((Sq + THREADS - 1) / THREADS, B * H), THREADS>>>(q, k, v, o, dout, lse, dq, Sq, Sk, D, causal, scale);
    CUDA_CHECK_LAUNCH();
    dkdv_keys<<<dim3((Sk + THREADS - 1) / THREADS, B * H), THREADS>>>(q, k, v, o, dout, lse, dk, dv, Sq, Sk, D, causal, scale);
    CUDA_CHECK_LAUNCH();
}

std::vector<Rung> rungs() {
    auto variant = [](bool dq_atomic, bool prefetch, bool vec_red, bool share_ps) {
        return [=](const float* q, const float* k, const float* v, const float* o, const float* g, const float* l, float* dq,
                   float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool c) {
            flash_attention_backward_variant(dq_atomic, prefetch, vec_red, share_ps, q, k, v, o, g, l, dq, dk, dv, B, H, Sq, Sk, D, c);
        };
    };
    return {
        {"1 naive: thread per row / per key", naive_backward, 1024},
        {"2 FA2 tiles, dQ by a second pass", variant(false, false, false, false), 1 << 30},
        {"3 dQ by atomics (scalar)", variant(true, false, false, false), 1 << 30},
        {"4 + float4 atomics (red.v4, sm_90)", variant(true, false, true, false), 1 << 30},
        {"5 + cp.async of the next Q, dO (reference)", flash_attention_backward, 1 << 30},
        {"6 3xTF32 on the tensor cores (top rung)", tf32_backward, 1 << 30},
        {"5 with dQ by a second pass", variant(false, true, false, false), 1 << 30},
        {"5 with P and dS in one buffer (A100)", variant(true, true, true, true), 1 << 30},
    };
}

}  // namespace task4::ladder_backward
