// task1.h — Task 1: naive multi-head attention on the CPU. The frozen interface.
//
// All tensors are row-major float32. B = batch, S = sequence length, H = heads,
// D = head_dim = hidden / H, BH = B·H. The harness projects x into q, k, v with the golden's
// weights, calls naive_mha, and applies the output projection afterwards.
#pragma once
#include <cstdint>

namespace task1 {

// task1.1  x [B, S, H·D] → xh [B, H, S, D]   (split the hidden dim into heads, then swap S and H)
void split_heads(const float* x, float* xh, int B, int S, int H, int D);

// task1.2  scores [BH, S, S] = qh [BH, S, D] · kh [BH, S, D]ᵀ / √D
void attention_scores(const float* qh, const float* kh, float* scores, int BH, int S, int D);

// task1.3  scores [BH, S, S]: entries above the diagonal (key j > query i) become −inf, in place
void apply_causal_mask(float* scores, int BH, int S);

// task1.4  each of `rows` rows of length `cols` becomes its softmax, in place, numerically stable
void softmax_rows(float* x, int64_t rows, int cols);

// task1.5  oh [BH, S, D] = probs [BH, S, S] · vh [BH, S, D]
void attention_output(const float* probs, const float* vh, float* oh, int BH, int S, int D);

// task1.6  oh [B, H, S, D] → out [B, S, H·D]   (the inverse of split_heads)
void merge_heads(const float* oh, float* out, int B, int S, int H, int D);

// The whole of it (given): q, k, v, out are [B, S, hidden], hidden = H·D.
void naive_mha(const float* q, const float* k, const float* v, float* out, int B, int S, int hidden, int num_heads,
               bool causal);

}  // namespace task1
