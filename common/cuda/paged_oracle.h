// paged_oracle.h — the grader's oracle for part 5b's timed calls (grader/timed.cpp): the inputs of a timed call made
// again from its nonce (task5_paged/timed_inputs.h), each query head's K and V gathered from the pages as floats, and
// Task 5's decode oracle in double over them. Trusted code: in the grader only.
#pragma once
#include <cstdint>

#include "common/cuda/digest.h"
#include "task5_paged/timed_inputs.h"

namespace attn {

// The fingerprint (digest.h, with sign_seed) of the float64 answer for the timed call whose inputs came from `seed`.
Digest paged_decode_oracle_digest(const task5::timed::Geometry& g, uint64_t seed, uint64_t sign_seed);

}  // namespace attn
