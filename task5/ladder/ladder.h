// ladder.h — Task 5's ladder steps (decode_ladder.cuh) with decode_attention's signature.
#pragma once

namespace task5_ladder {

void decode_plan(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq, int len, int D);
void decode_split(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq, int len, int D);

}  // namespace task5_ladder
