// attention_oracle.h — a trusted attention on the GPU for checking students' kernels on inputs
// too large for golden files (and on fresh inputs): cuBLAS fp32 GEMMs (TF32 off) and a plain
// masked softmax, materialising the scores. Not fast, not clever: easy to trust.
#pragma once
#include "common/cuda/device.h"

namespace attn {

class CublasGemm;

// q [BH, Sq, D], k and v [BH, Sk, D] → o [BH, Sq, D]; `scores` holds BH·Sq·Sk floats.
// Causal: key j is visible to query i iff j ≤ i + (Sk − Sq) (aligned at the bottom right, as
// FlashAttention does; the usual lower triangle when Sq == Sk). A query that sees no key gets 0.
void attention_oracle(CublasGemm& gemm, const float* q, const float* k, const float* v, float* o, int BH, int Sq, int Sk,
                      int D, bool causal, float* scores);

// How many heads' Sq×Sk float scores fit in 1 GB (at least 1, at most BH): the slice of heads an oracle materialises at
// once, so that checking a long sequence never needs more memory than a GPU has.
int heads_per_gb_of_scores(int BH, int Sq, int Sk);

// attention_oracle over BH heads of S positions in slices of heads_per_gb_of_scores(BH, S, S) heads; `scores` grows to
// one slice's scores when it is smaller (a caller that keeps it between calls allocates once).
void sliced_attention_oracle(CublasGemm& gemm, const float* q, const float* k, const float* v, float* o, int BH, int S,
                             int D, bool causal, DeviceBuffer<float>& scores);

// The same softmax over each row of x [rows, cols], in place (Task 2's timed softmax is checked against it).
void softmax_oracle(float* x, int rows, int cols);

// One query per (batch, head) against cache positions 0 … len−1, in double precision, the plainest
// way: q [BH, D], caches [BH, max_seq, D] → o [BH, D]. `scores` holds BH·len doubles.
void decode_oracle(const float* q, const float* k_cache, const float* v_cache, float* o, int BH, int max_seq, int len,
                   int D, double* scores);

}  // namespace attn
