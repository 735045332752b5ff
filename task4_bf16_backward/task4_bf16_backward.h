// task4_bf16_backward.h — Task 4's third bonus part (4d): FlashAttention-2's backward in bf16 on tensor cores.
// The frozen interface.
//
// q, o, dout, dq [B, H, Sq, D]; k, v, dk, dv [B, H, Sk, D]: device pointers, row-major __nv_bfloat16, 16-byte
// aligned. lse [B, H, Sq]: float32, each row's log-sum-exp of its scaled scores, as the forward of 4c writes it
// (task4_backward/task4_backward.h): +∞ for a row that sees no key. Scale 1/√D. Causal: key j is visible to query
// i iff j ≤ i + (Sk − Sq) (bottom-right aligned, as in task4.h). head_dim D ∈ {32, 64, 128}; anything else, a
// non-positive size, a null or misaligned pointer throws std::invalid_argument naming it.
//
// Every product on the tensor cores in bf16 (P and dS rounded to bf16 as their operands), every accumulation and
// the softmax's recomputation in float32; only the outputs are rounded to bf16. dq, dk and dv are overwritten.
// A row that sees no key gives zero gradients; a key that no row sees gets dk = dv = 0. Launches on the default
// stream, returns without synchronising, and holds nothing of size Sq × Sk.
//
// flash_attention_forward_bf16_lse: the forward that also hands the backward its lse, for training on these kernels
// (attnlab.attention on bf16 tensors, make train-attnlab). o as 4b's flash_attention_forward_bf16
// (task4_bf16/task4_bf16.h: the same head dims 64 and 128, the same errors); lse [B, H, Sq] float32 as above, natural
// log, +∞ for a row that sees no key. A null lse throws std::invalid_argument naming it.
// task4_bf16_backward/README.md gives the plan, the tolerance and the ladder.
#pragma once
#include <cuda_bf16.h>

namespace task4 {

void flash_attention_backward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* o, const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq,
                                   __nv_bfloat16* dk, __nv_bfloat16* dv, int B, int H, int Sq, int Sk, int D, bool causal);

void flash_attention_forward_bf16_lse(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                      __nv_bfloat16* o, float* lse, int B, int H, int Sq, int Sk, int D, bool causal);

}  // namespace task4
