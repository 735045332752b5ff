// Task 4 — FlashAttention forward as one fused CUDA kernel (fp32).
//
// Build and run:  make task4                      (your skeleton: tests)
//                 make task4 IMPL=reference       make bench-task4 IMPL=reference   make tune-task4
// One thread block owns Br query rows of one (batch, head). It walks the keys Bc at a time:
// S = Q·Kᵀ for the tile, the online-softmax update of the running max m and sum l, O += P·V.
// Q, K, V and P tiles live in dynamic shared memory (more than the 48 KB a static array may
// use: cudaFuncSetAttribute raises the limit); S, O, m and l live in registers. The scores never
// reach global memory, so memory is O(S·D) where the unfused pipeline of Task 2 needs O(S²).
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/todo.h"
#include "task4/task4.h"
#include "task4/tuning.h"

namespace task4 {

// ------------------------------------------------------------------------------------------------
// Your kernel. The plan of the course: one thread block per (Br query rows, batch·head), one thread
// per query row to start with (blockDim.x = Br), and a loop over the keys Bc at a time.
//
//   extern __shared__ float smem[];   // dynamic: its size is the launch's third <<<…>>> argument
//   float* Qs = smem;                 // [Br][D]   this block's query rows
//   float* Ks = Qs + Br * D;          // [Bc][D]   the current key tile
//   float* Vs = Ks + Bc * D;          // [Bc][D]   the current value tile
//
// TODO(task4.2) load this block's Br rows of Q into Qs (rows past Sq: zeros), __syncthreads().
// TODO(task4.3) for each key tile c0 = 0, Bc, 2·Bc, … (causal: stop after the last visible key):
//                 load K and V tiles (zeros past Sk), __syncthreads();
//                 each thread: s_j = q_row · k_j / √D for the tile's keys, −inf where masked
//                 (j ≥ Sk, or causal and j > row + Sk − Sq);
// TODO(task4.4)   online softmax: m_new = max(m, max_j s_j), alpha = exp(m − m_new),
//                 p_j = exp(s_j − m_new), l = alpha·l + Σ p_j, o = alpha·o + Σ_j p_j·v_j, m = m_new;
//                 __syncthreads() before the next tile overwrites Ks and Vs.
// TODO(task4.5) write o / l for rows < Sq.
// Registers: the thread's o[D] (D ≤ 128), m, l. Read Ks/Vs rows from shared memory, not global.
// ------------------------------------------------------------------------------------------------
template <int Br, int Bc>
__global__ void flash_attention_kernel(const float* q, const float* k, const float* v, float* o, int Sq, int Sk, int D,
                                       bool causal, float scale) {}

void flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                             int D, bool causal) {
    // TODO(task4.1): validate (D ∈ {32, 64, 96, 128}, else throw std::invalid_argument naming it),
    // pick Br and Bc, and launch flash_attention_kernel<Br, Bc> on a grid of
    // (ceil(Sq / Br), B·H) blocks of Br threads with (Br + 2·Bc)·D·sizeof(float) bytes of dynamic
    // shared memory. Above 48 KB, first call
    //   cudaFuncSetAttribute(flash_attention_kernel<Br, Bc>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
    // Then CUDA_CHECK_LAUNCH(). Tune Br and Bc with `make bench-task4`.
    (void)q, (void)k, (void)v, (void)o, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4.1");
}

}  // namespace task4
