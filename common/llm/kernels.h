// kernels.h — the small kernels of the model code of Tasks 6 and 7 (given, not graded): embedding,
// LayerNorm, head split with RoPE, head merge, activations, greedy and top-k sampling.
//
// Shapes: activations are token-major [B·S, width] (row b·S + s); attention takes heads
// [B, H, S, D]. Token ids live on the device in a history [B, stride] (int32), so a decode step
// reads its input token and writes the next one without the host. All launches go on the default
// stream and return without synchronising.
#pragma once
#include <cstdint>

namespace llm {

// x[b·S + s] = tok_emb[history[b·stride + start + s]] (+ pos_emb[start + s] when pos_emb is not null).
void embed(const int* history, int stride, int B, int start, int S, const float* tok_emb, const float* pos_emb, int vocab,
           int width, float* x);

// y[r] = LayerNorm(x[in_row(r)]) · gamma + beta over `width` (biased variance, eps), for r < rows,
// where in_row(r) = r · in_step + in_offset: (1, 0) for every row, (S, S − 1) for each sequence's last.
void layernorm(const float* x, const float* gamma, const float* beta, float* y, int rows, int width, float eps,
               int in_step = 1, int in_offset = 0);

// qkv [B·S, 3, H, D] (+ bias [3·H·D] when not null) → q, k, v [B, H, S, D]. With rope_cos/sin
// ([max_pos, D/2], position start + s) q and k are rotated (rotate-half, as GPT-NeoX and Llama).
void split_heads(const float* qkv, const float* bias, const float* rope_cos, const float* rope_sin, int B, int S, int H,
                 int D, int start, float* q, float* k, float* v);

// o [B, H, S, D] → y [B·S, H·D].
void merge_heads(const float* o, int B, int H, int S, int D, float* y);

// act[t, j] = SiLU(gu[t, j]) · gu[t, F + j]   (gu [T, 2F]: gate then up).
void swiglu(const float* gu, float* act, int T, int F);
// x[t, j] = GELU_tanh(x[t, j] + bias[j]) in place.
void bias_gelu(float* x, const float* bias, int T, int F);
// x[t, j] += bias[j].
void add_bias(float* x, const float* bias, int T, int F);

// For each row b of logits [B, V]: the argmax (lowest index on ties) into history[b·stride + col].
void argmax_to(const float* logits, int B, int V, int* history, int stride, int col);
// Top-k sampling at `temperature` (k ≤ 64): softmax over the k largest logits / temperature, one
// draw from a counter-based hash of (seed, col, b) — the same seed gives the same text.
void sample_top_k_to(const float* logits, int B, int V, int k, float temperature, uint64_t seed, int* history,
                     int stride, int col);

}  // namespace llm
