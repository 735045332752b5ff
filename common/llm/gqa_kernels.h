// gqa_kernels.h — the layouts of grouped-query attention in bf16 (Task 6's part 6b, given, not graded): the fused
// projection split into token-major heads with RoPE, the heads-first layout attention kernels take (K and V heads
// repeated for the query heads that share them). float ↔ bf16: common/cuda/bf16_convert.h.
//
// Token-major [T, heads, D] is a server's layout: row t is one token of whichever sequence it belongs to (a prompt's
// S tokens in a prefill, one token of each running sequence in a decode step). Launches go on the default stream
// and return without synchronising.
#pragma once
#include <cuda_bf16.h>

#include <cstddef>

namespace llm {

// qkv [T, (Hq + 2·Hkv)·D] (the query heads, then the K heads, then the V heads) → q [T, Hq, D], k and v
// [T, Hkv, D] rounded to bf16; q and k rotated (RoPE, rotate-half) at position positions[t] (device int32 [T])
// from the tables rope_cos, rope_sin [max_pos, D/2].
void split_rope_bf16(const float* qkv, const int* positions, const float* rope_cos, const float* rope_sin, int T, int Hq,
                     int Hkv, int D, __nv_bfloat16* q, __nv_bfloat16* k, __nv_bfloat16* v);

// src [T, Hs, D] → dst [Hd, T, D]: head h of dst is head h / (Hd / Hs) of src. With Hd = Hs a transpose; with
// Hd = g·Hs each K or V head repeated for its g query heads (Hugging Face's repeat_kv). Hd must be a multiple of Hs.
void tokens_to_heads_bf16(const __nv_bfloat16* src, __nv_bfloat16* dst, int T, int Hs, int Hd, int D);

// src [H, T, D] → dst [T, H, D].
void heads_to_tokens_bf16(const __nv_bfloat16* src, __nv_bfloat16* dst, int T, int H, int D);

}  // namespace llm
