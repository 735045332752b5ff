// timed_calls.h — the runner's side of a graded timing: `warmup` + `reps` calls, each on fresh
// inputs (`prepare(i)`, untimed), after an L2 flush, between CUDA events with the device
// synchronised; each timed call's output fingerprinted (digest.h) right after it. The result goes
// back to the trusted side, which brackets the whole request with its own clock and checks the
// fingerprints of calls it picks afterwards (grader/timed.cpp).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>

namespace attn {

// {"ms": [reps], "digests": [[sum, sumsq, nonfinite] × reps]}
nlohmann::json timed_calls(int warmup, int reps, const float* out, size_t out_n, const std::function<void(int)>& prepare,
                           const std::function<void()>& call);

}  // namespace attn
