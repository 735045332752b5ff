// timed_calls.h — the runner's side of a graded timing: `calls` calls back to back, each on fresh
// inputs (`prepare(i)`: made from the request's nonce), after an L2 flush, with its outputs
// fingerprinted (digest.h) on the default stream right after it. Nothing here reads a clock: the
// trusted side times the whole request with its own clock, subtracts what the null runner (the
// harness with nothing of the student's) takes for the same request, and checks every call's fingerprints
// against the oracle's (grader/timed.cpp). Work the call leaves on another stream races the
// fingerprint that follows it and shows as a wrong one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

namespace attn {

// One output of a timed call, read as floats after it (a bf16 output is converted inside the call).
struct TimedOutput {
    const float* data;
    size_t n;
};

// {"digests": [[kDigestSlots × outputs numbers] × calls]}: call i's fingerprint of output j with the signs of
// timed_sign_seed(seed, i, j), the outputs' fingerprints one after another. `after` (may be empty): the harness's own
// work on a call's outputs before they are fingerprinted (a bf16 output read as floats), outside the call's launch log.
// Nothing is synchronised between calls: the device runs the harness's work and the calls back to back; the reply
// waits for all of it.
nlohmann::json timed_calls(int calls, uint64_t seed, const std::vector<TimedOutput>& outputs, const std::function<void(int)>& prepare,
                           const std::function<void()>& call, const std::function<void()>& after = {});

// The same with one output.
inline nlohmann::json timed_calls(int calls, uint64_t seed, const float* out, size_t out_n, const std::function<void(int)>& prepare,
                                  const std::function<void()>& call, const std::function<void()>& after = {}) {
    return timed_calls(calls, seed, {{out, out_n}}, prepare, call, after);
}

// The sign seed of call i's fingerprint of output j (its inputs come from seed + 4i, + 1, + 2): the trusted side
// fingerprints the oracle's output with the same one. Each output its own signs.
inline uint64_t timed_sign_seed(uint64_t seed, int i, int output = 0) {
    return seed + 4 * uint64_t(i) + 3 + uint64_t(output) * 0x9e3779b97f4a7c15ull;
}

}  // namespace attn
