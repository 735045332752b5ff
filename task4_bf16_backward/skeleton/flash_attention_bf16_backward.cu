// Task 4, bonus part 4d — FlashAttention-2's backward in bf16 on tensor cores (interface:
// task4_bf16_backward/task4_bf16_backward.h).
//
// Build and run:  make task4-bf16-backward                  (your skeleton: the part's tests; on a GPU)
//                 make task4-bf16-backward IMPL=reference   (the model solution)
//                 make bench-task4-bf16-backward            (TFLOP/s on a GPU; tools/vs_torch/sdpa_bf16_backward.py
//                                                            times torch's bf16 backwards beside it)
// Three kernels: the row term δ_i = Σ_d dO_id·O_id (float32, with dQ's float32 accumulator set to zero), the key
// tiles (each block owns 64 keys of one head, holds their dK and dV in registers and walks the query tiles,
// adding its share of dQ to the accumulator with atomics), and dQ's conversion to bf16. Needs sm_80 or newer
// (bf16 mma.sync); on an older GPU the call throws std::runtime_error saying so. The course's reference runs rung 2
// of the ladder on an H100 or H200 (wgmma and TMA, from flash_attention_bf16_backward_sm90.cu, which is empty in the
// kit: a Hopper path of yours may go there).
// task4_bf16_backward/README.md gives the plan, the tolerance and the ladder.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/grid.cuh"
#include "common/cuda/stream_scratch.h"
#include "common/todo.h"
#include "task4_bf16_backward/task4_bf16_backward.h"

namespace task4 {

// ------------------------------------------------------------------------------------------------
// The plan (task4_bf16_backward/README.md, "The plan"): FlashAttention-2's Algorithm 2 on the tensor cores.
// Three kernels on the default stream:
//   row_term_kernel   δ_i = Σ_d dO_id·O_id in float32 for every row; dQ's float32 accumulator (a scratch buffer of
//                     B·H·Sq·D floats: cudaMallocAsync / cudaFreeAsync on stream 0) set to zero.
//   key_tile_kernel   one block per 64 keys of one (batch, head) — grid attn::grid_over_heads(ceil(Sk/64), B·H),
//                     the head is attn::head_of_block() — 4 warps, warp w owning keys 16w … 16w+15, their dK and
//                     dV (16 × D float32 each) in registers as mma C fragments for the whole walk.
//   dq_convert_kernel dQ = accumulator / √D, rounded to bf16.
//
// TODO(task4d.2) load the block's K and V tiles (64 × D bf16, zeros past Sk) into shared memory.
// TODO(task4d.3) walk the query tiles of 64 rows (causal: from the first row i with i + Sk − Sq ≥ the block's
//     first key): load Q_i and dO_i (zeros past Sq), lse_i·log2(e) (+∞ past Sq) and δ_i; then per warp, with
//     mma.sync.m16n8k16 (bf16 in, float32 out; A and B fragments by ldmatrix from shared memory):
//       Sᵀ = K·Q_iᵀ and dPᵀ = V·dO_iᵀ   (16 keys × 64 rows)
//       Pᵀ = exp2(Sᵀ·log2(e)/√D − lse·log2(e)), 0 where masked (key ≥ Sk, or causal and key > row + Sk − Sq)
//       dSᵀ = Pᵀ∘(dPᵀ − δ)               (float32)
// TODO(task4d.4) dV += Pᵀ·dO_i and dK += dSᵀ·Q_i: Pᵀ and dSᵀ rounded to bf16 are already mma A fragments (the C
//     layout of two n8 blocks is the A layout of one k16 block); dO_i and Q_i by ldmatrix.trans.
// TODO(task4d.5) dQ_i += dS·K: store dSᵀ to shared memory, __syncthreads(), each warp computes a share of the
//     64 × D block and adds it to the accumulator with atomicAdd (other key tiles add into the same rows at the
//     same time: a plain += loses updates). __syncthreads() before the next tile overwrites the buffers.
// TODO(task4d.6) write dK / √D and dV in bf16 for the keys below Sk (a key that no row sees: zeros).
// Every accumulation stays in float32: only the mma operands (P, dS, the inputs) and the outputs are bf16.
// ------------------------------------------------------------------------------------------------

void flash_attention_backward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* o, const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq,
                                   __nv_bfloat16* dk, __nv_bfloat16* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
    // TODO(task4d.1): validate (D ∈ {32, 64, 128}; sizes positive; pointers set: std::invalid_argument naming the
    // argument), then launch the three kernels of the plan above, CUDA_CHECK_LAUNCH() after each. Measure with
    // `make bench-task4-bf16-backward`; the README's ladder says what comes next.
    (void)q, (void)k, (void)v, (void)o, (void)dout, (void)lse, (void)dq, (void)dk, (void)dv, (void)B, (void)H, (void)Sq, (void)Sk,
        (void)D, (void)causal;
    ATTNLAB_TODO("task4d.1");
}


void flash_attention_forward_bf16_lse(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                      __nv_bfloat16* o, float* lse, int B, int H, int Sq, int Sk, int D, bool causal) {
    // TODO(task4d.7), for training (attnlab.attention on bf16 tensors, make train-attnlab): your 4b forward that also
    // writes each row's log-sum-exp, lse = log Σ_j exp(s_ij/√D) over the keys the row sees: at the end of the row,
    // m + log(l) (with exp2 and m kept in log2 units, (m + log2 l)·ln 2), +∞ where l = 0. Simplest: give your 4b
    // kernel an lse pointer (null from flash_attention_forward_bf16: nothing written) and launch it from here
    // through a function of your 4b file declared here. A null lse throws std::invalid_argument naming it.
    (void)q, (void)k, (void)v, (void)o, (void)lse, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4d.7");
}

}  // namespace task4
