// task5.h — Task 5: the KV cache and decode attention. The frozen interface.
//
// The cache holds K and V of every position so far: k_cache, v_cache [B, H, max_seq, D], device
// memory, preallocated once. Each decode step appends one token's K and V and attends its one query
// to all positions 0 … pos. All pointers are device pointers (row-major float32); work goes on the
// default stream. head_dim D ∈ {32, 64, 96, 128}.
#pragma once

namespace task5 {

// Given: the prefill's K and V [B, H, S, D] into cache positions 0 … S−1 (S ≤ max_seq).
void store_prefill(float* k_cache, float* v_cache, const float* k, const float* v, int B, int H, int max_seq, int S, int D);

// task5.1  the new token's k_new, v_new [B, H, 1, D] (the same memory as [B, 1, H·D]) into
//          position `pos` of the caches, in place. pos < 0 or pos ≥ max_seq throws
//          std::out_of_range naming both — never a write past the end.
void update_cache(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int B, int H, int max_seq,
                  int D, int pos);

// task5.2  o [B, H, 1, D] = softmax(q·Kᵀ/√D)·V for the one query q [B, H, 1, D] against cache
//          positions 0 … len−1 (nothing past len−1 may be read). len < 1 or len > max_seq throws
//          std::out_of_range naming both — never a read past the end.
void decode_attention(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq,
                      int len, int D);

}  // namespace task5
