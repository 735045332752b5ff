// Task 4, bonus part — FlashAttention forward in bf16 on tensor cores (interface: task4_bf16/task4_bf16.h).
//
// Build and run:  make task4-bf16                 (your skeleton: the bonus tests; on a GPU)
//                 make task4-bf16 IMPL=reference  (the model solution)
//                 make bench-task4-bf16           (TFLOP/s on a GPU; tools/vs_torch/sdpa_bf16.py times torch beside it)
// Inputs and output are bf16, the softmax statistics and every accumulation float32. Needs sm_80 or
// newer (bf16 tensor cores); on an older GPU the call throws std::runtime_error saying so.
// task4/README.md ("Bonus: bf16 on tensor cores") gives the plan, the tolerance and the ladder.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/grid.cuh"
#include "common/todo.h"
#include "task4_bf16/task4_bf16.h"

namespace task4 {

// ------------------------------------------------------------------------------------------------
// Your kernel: the plan of task4_bf16/README.md, with WMMA fragments
// (#include <mma.h>; nvcuda::wmma, 16×16×16 tiles, bf16 operands, float accumulators).
// A block of 4 warps (128 threads) owns Br = 64 query rows of one (batch, head) — blockIdx.x is the
// row tile, the head b·H + h is attn::head_of_block() (blockIdx.y, and blockIdx.z past 65535 heads:
// common/cuda/grid.cuh) — and walks the keys Bc = 64 at a time. Dynamic shared memory:
//   Qs [64][D] bf16   Ks [64][D] bf16   Vs [64][D] bf16
//   Ss [64][64] fp32 (the tile's scores)   Ps [64][64] bf16 (the probabilities)
//   Os [64][D] fp32 (the output accumulator)   m[64], l[64] fp32 (running max and sum per row)
// (= 104 KB at D = 128: two blocks per SM.)
//
// TODO(task4b.2) load Q (rows past Sq: zeros), zero Os, m = −inf, l = 0.
// TODO(task4b.3) per key tile (causal: stop after the last key any row can see, row + Sk − Sq):
//     load K and V (rows past Sk: zeros); __syncthreads(); warp w computes the 16×64 block of
//     S = Q·Kᵀ for its rows 16w … 16w+15 (matrix_a from Qs row-major, matrix_b from Ks col-major:
//     Kᵀ's columns are K's rows), accumulating D/16 products in float, and stores it to Ss.
// TODO(task4b.4) online softmax: 2 threads per row (or a warp per 16 rows, your choice) read the
//     row of Ss, mask (key ≥ Sk, or causal and key > row + Sk − Sq: −inf), m_new = max(m, max),
//     alpha = exp(m − m_new) (1 while m_new is −inf), p = exp(s/√D − m_new) written to Ps as bf16,
//     l = alpha·l + Σ p (the float p), the row of Os multiplied by alpha; __syncthreads().
// TODO(task4b.5) Os += Ps·Vs: load the accumulator fragments from Os (load_matrix_sync, mem_row_major),
//     mma_sync over the 4 k-steps of 16 keys, store them back; __syncthreads() before the next tile.
// TODO(task4b.6) write Os / l as bf16 for rows < Sq (a row that saw no key gets zeros).
// Every accumulation stays in float: a bf16 accumulator (P·V summed in bf16) fails the tests.
template <int D>
__global__ void __launch_bounds__(128) flash_bf16_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                                         const __nv_bfloat16* v, __nv_bfloat16* o, int Sq, int Sk,
                                                         bool causal, float scale) {}

void flash_attention_forward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                  __nv_bfloat16* o, int B, int H, int Sq, int Sk, int D, bool causal) {
    // TODO(task4b.1): validate (D ∈ {64, 128}, else throw std::invalid_argument naming it; Sk = 0 likewise),
    // then launch flash_bf16_kernel<D> on a grid of attn::grid_over_heads(ceil(Sq / 64), B·H) blocks of 128 threads with the
    // shared memory of the plan above (cudaFuncSetAttribute first when it is above 48 KB), then
    // CUDA_CHECK_LAUNCH(). Measure with `make bench-task4-bf16`; the README's ladder says what comes next.
    (void)q, (void)k, (void)v, (void)o, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4b.1");
}

}  // namespace task4
