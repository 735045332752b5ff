// timed_calls.h — the runner's side of a graded timing: `calls` calls back to back, each on fresh
// inputs (`prepare(i)`: made from the request's nonce), after an L2 flush, with its output
// fingerprinted (digest.h) on the default stream right after it. Nothing here reads a clock: the
// trusted side times the whole request with its own clock, subtracts what the null runner (the
// harness with nothing of the student's) takes for the same request, and checks every call's fingerprint
// against the oracle's (grader/timed.cpp). Work the call leaves on another stream races the
// fingerprint that follows it and shows as a wrong one.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

namespace attn {

// {"digests": [[kDigestSlots numbers] × calls]}: call i's fingerprint with the signs of timed_sign_seed(seed, i).
// Nothing is synchronised between calls: the device runs the harness's work and the calls back to back; the reply
// waits for all of it.
nlohmann::json timed_calls(int calls, uint64_t seed, const float* out, size_t out_n, const std::function<void(int)>& prepare,
                           const std::function<void()>& call);

// The sign seed of call i's fingerprint (its inputs come from seed + 4i, + 1, + 2): the trusted side fingerprints
// the oracle's output with the same one.
inline uint64_t timed_sign_seed(uint64_t seed, int i) { return seed + 4 * uint64_t(i) + 3; }

}  // namespace attn
