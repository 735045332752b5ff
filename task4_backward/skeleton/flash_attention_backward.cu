// Task 4, bonus part 4c — FlashAttention-2's backward pass in fp32 on CUDA cores (interface: task4_backward/task4_backward.h).
//
// Build and run:  make task4-backward                  (your skeleton: the bonus tests; on a GPU)
//                 make task4-backward IMPL=reference   (the model solution)
//                 make bench-task4-backward            (the backward's TFLOP/s on a GPU; tools/vs_torch/sdpa_backward.py times
//                                                       torch's float32 backward beside it)
// Two entry points. flash_attention_forward_lse is Task 4's fused forward that also writes each row's log-sum-exp
// lse = m + log(l), the one number per row the backward needs. flash_attention_backward is FlashAttention-2's
// Algorithm 2: a small pre-kernel computes the row term D_i = rowsum(dO_i ∘ O_i); then one thread block per tile of
// keys holds K_j and V_j in shared memory and its dK_j and dV_j in registers, walks the query tiles, recomputes
// P = exp(S/√D − lse) from lse (nothing of size Sq × Sk is ever stored), and adds its share of dQ with atomics.
// task4/README.md ("Bonus: the backward pass") gives the plan, the tolerance and the measured ladder.
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
#include "task4_backward/task4_backward.h"

namespace task4 {

// ------------------------------------------------------------------------------------------------
// Your kernels: the plan of task4/README.md ("Bonus: the backward pass"), FlashAttention-2's Algorithm 2.
//
// The forward with lse. Your Task 4 kernel, copied here (a kernel of this file), plus one number per row:
// TODO(task4c.2) when a row's sum l is final, write lse = m + log(l) (natural log; mind the base if your m is in
//     log2 units), and lse = +∞ for a row that saw no key (causal with Sq > Sk; its O is 0).
//
// The backward, in three passes on the default stream (P is recomputed from lse: nothing Sq × Sk is stored):
// TODO(task4c.4) the row term: D_i = Σ_d dO[i][d]·O[i][d] for every row (one warp a row, float4 loads, a shuffle
//     sum) into a scratch buffer of B·H·Sq floats; the same pass may write dQ = 0 (dQ is accumulated by atomics).
// TODO(task4c.5) the key-tile kernel: a block of 256 threads owns BC = 64 keys of one (batch, head) — blockIdx.x the
//     key tile, the head b·H + h = attn::head_of_block() (common/cuda/grid.cuh: gridDim.y stops at 65535); threads form 16 row groups of 16 lanes (ty = threadIdx.x / 16, tx = % 16).
//     Load K_j and V_j once (rows past Sk: zeros). Keep in registers dK[4][D/16] and dV[4][D/16] for keys 4ty … 4ty+3,
//     head dims 4tx … 4tx+3, 64+4tx … (tx, tx+16, … when D is 32 or 96). Walk the query tiles of BR = 64 rows (causal:
//     start at the tile holding row j0 − (Sk − Sq), the first row that sees key j0); per tile load Q_i and dO_i (rows
//     past Sq: zeros) and the tile's lse and D_i; __syncthreads(); then S = Q_i·K_jᵀ and dP = dO_i·V_jᵀ, each thread
//     4 rows (4ty …) × 4 keys (tx, tx+16, tx+32, tx+48), float4 reads along d.
// TODO(task4c.6) P = exp(S/√D − lse), 0 where masked (key ≥ Sk, or causal and key > row + Sk − Sq; a row past Sq or
//     with lse = +∞ gives exp(−∞) = 0 by itself); dS = P∘(dP − D_i). Write P and dS to shared memory ([64][64+4]
//     each); __syncthreads().
// TODO(task4c.7) dV_j += Pᵀ·dO_i and dK_j += dSᵀ·Q_i (for each of the 64 rows r: a float4 of P[r][4ty …] and the
//     thread's head dims of dO[r]), then dQ_i += dS·K_j/√D: the thread's 4 rows × D/16 dims, added to dQ in global
//     memory with atomicAdd (key tiles of the same rows run at the same time: a plain += loses updates).
//     __syncthreads() before the next tile overwrites Q_i, dO_i, P and dS.
// TODO(task4c.8) write dK_j/√D and dV_j for keys < Sk.
// Shared memory: K, V, Q, dO ([64][D+4] each), P and dS ([64][68] each), lse and D_i (64 each): 170 KB at D = 128 —
// one block per SM (cudaFuncSetAttribute first: above 48 KB it must be allowed).
template <int D>
__global__ void __launch_bounds__(128) forward_lse_kernel(const float* q, const float* k, const float* v, float* o,
                                                          float* lse, int Sq, int Sk, bool causal, float scale) {}
template <int D>
__global__ void __launch_bounds__(256) row_term_kernel(const float* o, const float* dout, float* delta, float* dq,
                                                       size_t rows) {}
template <int D>
__global__ void __launch_bounds__(256) key_tile_kernel(const float* q, const float* k, const float* v, const float* dout,
                                                       const float* lse, const float* delta, float* dq, float* dk,
                                                       float* dv, int Sq, int Sk, bool causal, float scale) {}

void flash_attention_forward_lse(const float* q, const float* k, const float* v, float* o, float* lse, int B, int H,
                                 int Sq, int Sk, int D, bool causal) {
    // TODO(task4c.1): validate (D ∈ {32, 64, 96, 128}; B, H, Sq, Sk positive; no null pointer — else throw
    // std::invalid_argument naming the argument), then launch your Task 4 kernel with lse (above) on a grid of
    // attn::grid_over_heads(ceil(Sq / 64), B·H) blocks (common/cuda/grid.cuh), then CUDA_CHECK_LAUNCH().
    (void)q, (void)k, (void)v, (void)o, (void)lse, (void)B, (void)H, (void)Sq, (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4c.1");
}

void flash_attention_backward(const float* q, const float* k, const float* v, const float* o, const float* dout,
                              const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D,
                              bool causal) {
    // TODO(task4c.3): validate as above (every pointer named), then on the default stream: a scratch buffer for D_i
    // (cudaMallocAsync(&p, bytes, 0) … cudaFreeAsync(p, 0): stream-ordered, no synchronisation), the row-term kernel
    // (it also zeroes dq), the key-tile kernel on a grid of attn::grid_over_heads(ceil(Sk / 64), B·H) blocks of 256 threads, and
    // CUDA_CHECK_LAUNCH() after each launch. Measure with `make bench-task4-backward`.
    (void)q, (void)k, (void)v, (void)o, (void)dout, (void)lse, (void)dq, (void)dk, (void)dv, (void)B, (void)H, (void)Sq,
        (void)Sk, (void)D, (void)causal;
    ATTNLAB_TODO("task4c.3");
}

}  // namespace task4
