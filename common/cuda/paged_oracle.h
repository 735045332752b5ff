// paged_oracle.h — the grader's oracles for the timed calls over pages (grader/timed.cpp): part 5b's decode and part
// 6b's server step. The inputs of a timed call made again from its nonce (task5_paged/timed_inputs.h,
// task6_serve/timed_inputs.h), each query head's K and V gathered from the pages as floats, and Task 5's decode oracle
// in double over them; 6b's prefill by the cuBLAS float32 attention oracle. Trusted code: in the grader only.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "common/cuda/digest.h"
#include "task5_paged/timed_inputs.h"
#include "task6_serve/timed_inputs.h"

namespace attn {

class CublasGemm;

// The fingerprint (digest.h, with sign_seed) of the float64 answer for the timed call whose inputs came from `seed`.
Digest paged_decode_oracle_digest(const task5::timed::Geometry& g, uint64_t seed, uint64_t sign_seed);

// The fingerprints of the answers for 6b's timed step whose inputs came from `seed`, with sign_seed(0) and
// sign_seed(1): the prefill's o [prompt, H_q, D] (causal attention over the prompt, cuBLAS float32) and the decode
// step's o [B + 1, H_q, D] (double, each row over its sequence's pages as the step leaves them: the prompt's K and V
// in the newcomer's pages, every row's new K and V in its next slot).
std::vector<Digest> serve_step_oracle_digests(CublasGemm& gemm, const task6::timed::Step& g, uint64_t seed,
                                              const std::function<uint64_t(int)>& sign_seed);

}  // namespace attn
