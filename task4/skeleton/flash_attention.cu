// Task 4 — FlashAttention forward as one fused CUDA kernel (fp32).
//
// Build and run:  make task4                      (your skeleton: tests)
//                 make bench-task4                (your kernel beside the Task-2 pipeline and cuBLAS, on a GPU)
// One thread block owns a tile of query rows of one (batch, head) and walks the keys a tile at a
// time: S = Q·Kᵀ for the tile, the online-softmax update of the running max m and sum l, O += P·V.
// The tiles live in dynamic shared memory, S, O, m and l in registers: the scores never reach
// global memory, so memory is O(S·D) where the unfused pipeline of Task 2 needs O(S²).
// task4/README.md gives the plan, and the measured ladder of changes that makes it faster.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/grid.cuh"
#include "common/cuda/kernel_todo.cuh"
#include "common/todo.h"
#include "task4/task4.h"
#include "task4/tuning.h"

namespace task4 {

// ------------------------------------------------------------------------------------------------
// Your kernel: the plan of task4/README.md. A block of 128 threads owns Br = 64 query rows of one
// (batch, head) — blockIdx.x is the row tile, the head b·H + h is attn::head_of_block() (blockIdx.y,
// and blockIdx.z past 65535 heads: common/cuda/grid.cuh) — and walks the keys Bc = 64 at a time. The threads form 8 row groups of 16 lanes: ty = threadIdx.x / 16, tx = threadIdx.x % 16.
// Each thread keeps in registers, for the 8 rows 8·ty … 8·ty+7:
//   s[8][4]        the scores of keys tx, tx+16, tx+32, tx+48 of the current tile
//   acc[8][D/16]   the output: head dims 4·tx … 4·tx+3, 64+4·tx … (float4s) when D is 64 or 128;
//                  tx, tx+16, tx+32, … when D is 32 or 96
//   m[8], l[8]     the running max and this thread's share of the running sum
// Dynamic shared memory, every row padded by 4 floats (so that 16 lanes reading float4s of 16
// different rows hit different banks):
//   Qs [64][D+4]    Ks [64][D+4], which P [64][64+4] overwrites once the scores are computed
//   Vs [64][D+4]    (Q + K/P + V = 101 KB at D = 128: two blocks fit on an SM; a fourth buffer
//                    for P would leave room for one — docs/perf.md measured 1.4x between them)
//
// TODO(task4.2) load the block's 64 rows of Q into Qs (rows past Sq: zeros).
// TODO(task4.3) for each key tile c0 = 0, 64, … (causal: stop after the last key any of the
//     block's rows can see, row + Sk − Sq): __syncthreads(); load K and V (rows past Sk: zeros);
//     __syncthreads(); s[i][j] = Σ_d Qs[row][d]·Ks[key][d] (float4 reads along d), × 1/√D, and
//     −inf where masked (key ≥ Sk, or causal and key > row + Sk − Sq).
// TODO(task4.4) online softmax per row: the tile's row max over the 16 lanes of the row group
//     (__shfl_xor_sync with offsets 8, 4, 2, 1), m_new = max(m, it), alpha = exp(m − m_new)
//     (1 while m_new is −inf), p = exp(s − m_new) (0 while m_new is −inf), l = alpha·l + Σ p,
//     acc *= alpha, m = m_new; __syncthreads() (all reads of K done); write p into P (over K);
//     __syncthreads(); acc += P·V, reading P rows as float4s and V rows from Vs.
// TODO(task4.5) sum l over the 16 lanes (shuffles again) and write acc / l for rows < Sq (a row
//     that saw no key — causal with Sq > Sk — gets 0).
// D is a template parameter: known at compile time, acc[8][D/16] stays in registers. (An array
// indexed by a run-time value lives in local memory: one thread per row with a run-time D ran
// 35–55x slower than this plan on an H100.)
template <int D>
__global__ void __launch_bounds__(128) flash_attention_kernel(const float* q, const float* k, const float* v, float* o,
                                                              int Sq, int Sk, bool causal, float scale) {
    ATTNLAB_KERNEL_TODO(o, 4, 2);  // the tests then say "task4.2 not implemented": delete this line when you write the kernel
}

void flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                             int D, bool causal) {
    // TODO(task4.1): validate (D ∈ {32, 64, 96, 128}, else throw std::invalid_argument naming it; Sk = 0
    // likewise), then launch flash_attention_kernel<D> (a switch over the four D) on a grid of
    // attn::grid_over_heads(ceil(Sq / 64), B·H) blocks of 128 threads (gridDim.y stops at 65535 and B·H may not:
    // common/cuda/grid.cuh spreads the heads over y and z; the kernel returns when head_of_block() ≥ B·H) with (64·(D+4)·3)·sizeof(float) bytes of dynamic
    // shared memory (P fits in K's place: 64·68 ≤ 64·(D+4) for D ≥ 64; for D = 32 take the larger).
    // Above 48 KB, first call (once per kernel)
    //   cudaFuncSetAttribute(flash_attention_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
    // Then CUDA_CHECK_LAUNCH(). Measure with `make bench-task4`; the README's ladder says what comes next.
    (void)q, (void)k, (void)v, (void)o, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4.1");
}

}  // namespace task4
