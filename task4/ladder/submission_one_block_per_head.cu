// submission_one_block_per_head.cu — a correct but slow Task 4 submission, as students port it from the well-known
// ~100-line minimal FlashAttention kernel: one block of 32 threads per (batch, head), Q, K and V tiles of 32 rows in
// shared memory, the outer loop over key tiles and the inner one over query tiles, the running max m and sum l of each
// row in global memory (with the causal mask, Sq ≠ Sk and partial tiles added, and O kept unnormalised until the end
// so that it holds Task 4's tolerance). It fills one SM per head: at B·H = 1 one block runs on the whole GPU.
//
// Built as a submission by the calibration case task4_calibration_one_block_per_head (grader/controls.json,
// tools/controls/check_controls.py): every correctness case must pass within its time — the fused case included —
// and the speed table must be measured, with its (small) credit. Course staff material, not in the student kit.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/grid.cuh"
#include "task4/task4.h"

namespace {

constexpr int kTile = 32;  // rows of Q and of K/V per tile; one thread per query row

template <int D>
__global__ void one_block_per_head(const float* q, const float* k, const float* v, float* o, float* m_all, float* l_all,
                                   long long BH, int Sq, int Sk, bool causal, float scale) {
    const long long bh = attn::head_of_block();
    if (bh >= BH) return;
    extern __shared__ float smem[];
    float* Qi = smem;            // [kTile][D]
    float* Kj = Qi + kTile * D;  // [kTile][D]
    float* Vj = Kj + kTile * D;  // [kTile][D]
    const int tx = threadIdx.x, offset = Sk - Sq;
    const float* Q = q + bh * Sq * D;
    const float* K = k + bh * Sk * D;
    const float* V = v + bh * Sk * D;
    float* O = o + bh * Sq * D;
    float* M = m_all + bh * Sq;
    float* L = l_all + bh * Sq;
    for (int r = tx; r < Sq; r += kTile) {
        M[r] = -INFINITY, L[r] = 0.f;
        for (int d = 0; d < D; ++d) O[size_t(r) * D + d] = 0.f;
    }
    for (int j0 = 0; j0 < Sk; j0 += kTile) {
        __syncthreads();
        for (int d = 0; d < D; ++d) {
            const bool in = j0 + tx < Sk;
            Kj[tx * D + d] = in ? K[size_t(j0 + tx) * D + d] : 0.f;
            Vj[tx * D + d] = in ? V[size_t(j0 + tx) * D + d] : 0.f;
        }
        for (int i0 = 0; i0 < Sq; i0 += kTile) {
            const int row = i0 + tx;
            __syncthreads();
            for (int d = 0; d < D; ++d) Qi[tx * D + d] = row < Sq ? Q[size_t(row) * D + d] : 0.f;
            __syncthreads();
            if (row >= Sq) continue;
            float s[kTile], row_max = -INFINITY;
            for (int c = 0; c < kTile; ++c) {
                const int key = j0 + c;
                float dot = 0.f;
                for (int d = 0; d < D; ++d) dot += Qi[tx * D + d] * Kj[c * D + d];
                const bool visible = key < Sk && (!causal || key <= row + offset);
                s[c] = visible ? dot * scale : -INFINITY;
                row_max = fmaxf(row_max, s[c]);
            }
            if (row_max == -INFINITY) continue;  // no key of this tile is visible to the row
            const float m_old = M[row], m_new = fmaxf(m_old, row_max), alpha = expf(m_old - m_new);
            float sum = 0.f;
            for (int c = 0; c < kTile; ++c) sum += (s[c] = expf(s[c] - m_new));
            for (int d = 0; d < D; ++d) {
                float pv = 0.f;
                for (int c = 0; c < kTile; ++c) pv += s[c] * Vj[c * D + d];
                O[size_t(row) * D + d] = alpha * O[size_t(row) * D + d] + pv;
            }
            M[row] = m_new, L[row] = alpha * L[row] + sum;
        }
    }
    __syncthreads();
    for (int r = tx; r < Sq; r += kTile) {  // O / l; a row that saw no key keeps its zeros
        const float inv = L[r] > 0.f ? 1.f / L[r] : 0.f;
        for (int d = 0; d < D; ++d) O[size_t(r) * D + d] *= inv;
    }
}

template <int D>
void launch(const float* q, const float* k, const float* v, float* o, long long BH, int Sq, int Sk, bool causal) {
    constexpr size_t smem = size_t(3) * kTile * D * sizeof(float);
    static const bool attr = [] {
        CUDA_CHECK(cudaFuncSetAttribute(one_block_per_head<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        return true;
    }();
    (void)attr;
    float* m = nullptr;  // m and l of every row, in stream order on the default stream
    CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&m), size_t(2) * BH * Sq * sizeof(float), 0));
    one_block_per_head<D><<<attn::grid_over_heads(1, BH), kTile, smem>>>(q, k, v, o, m, m + BH * Sq, BH, Sq, Sk, causal,
                                                                        float(1.0 / std::sqrt(double(D))));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFreeAsync(m, 0));
}

}  // namespace

void task4::flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                                    int D, bool causal) {
    if (D != 32 && D != 64 && D != 96 && D != 128)
        throw std::invalid_argument("flash_attention_forward: head_dim " + std::to_string(D) + " is not supported (32, 64, 96 or 128)");
    if (Sk == 0) throw std::invalid_argument("flash_attention_forward: Sk = 0 (no keys to attend to)");
    const long long BH = (long long)B * H;
    if (BH == 0 || Sq == 0) return;
    switch (D) {
        case 32: return launch<32>(q, k, v, o, BH, Sq, Sk, causal);
        case 64: return launch<64>(q, k, v, o, BH, Sq, Sk, causal);
        case 96: return launch<96>(q, k, v, o, BH, Sq, Sk, causal);
        default: return launch<128>(q, k, v, o, BH, Sq, Sk, causal);
    }
}
