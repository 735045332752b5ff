// variants.h — the reference decode kernel's two forms, for the benchmarks (reference only):
// splits = 1 is the plain kernel (one block per (batch, head)); splits > 1 is split-KV
// (FlashDecoding): the positions are cut into `splits` chunks, each block writes a partial
// (m, l, O) and a combine kernel merges them.
#pragma once

// Weak, so that a benchmark linked against a student's Task 5 (which has neither) sees null
// pointers and skips the comparison.
namespace task5 {

__attribute__((weak)) int choose_splits(int BH, int len);  // what decode_attention uses
__attribute__((weak)) void decode_attention_with_splits(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H,
                                  int max_seq, int len, int D, int splits);

}  // namespace task5
