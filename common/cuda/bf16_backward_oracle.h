// bf16_backward_oracle.h — the grader's oracle for part 4d's timed calls (grader/timed.cpp): the inputs of a timed call
// made again from its nonce (task4_bf16_backward/timed_inputs.h) as floats, and attention's backward from that o and
// lse by cuBLAS float32 GEMMs (TF32 off) over materialised scores, in slices of heads. Its own error (float32 sums, a
// relative 1e-6 or so) is far under what a fingerprint can tell from a bf16 kernel's (digest.h). Trusted code: in the
// grader only.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "common/cuda/digest.h"
#include "task4_bf16_backward/timed_inputs.h"

namespace attn {

class CublasGemm;

// dq, dk, dv of attention over BH heads given o and lse (the backward alone, as 4d's interface defines it:
// task4_bf16_backward/task4_bf16_backward.h): q, o, dout, dq [BH, Sq, D]; k, v, dk, dv [BH, Sk, D]; lse [BH, Sq] (natural
// log of the scaled scores' Σ exp; +∞: a row that sees no key, zero gradients). Float32 device pointers. The scores and
// dS of at most 1 GB of heads at a time (kept here between calls).
void attention_backward_from_lse(CublasGemm& gemm, const float* q, const float* k, const float* v, const float* o,
                                 const float* dout, const float* lse, float* dq, float* dk, float* dv, int BH, int Sq, int Sk,
                                 int D, bool causal);

// The fingerprints of dQ, dK and dV (signs sign_seed(0), (1), (2)) for the timed call whose inputs came from `seed`.
std::vector<Digest> bf16_backward_oracle_digests(CublasGemm& gemm, const task4::bf16_backward_timed::Geometry& g, uint64_t seed,
                                                 const std::function<uint64_t(int)>& sign_seed);

}  // namespace attn
