// check.h — the steps every case takes around the call under test.
//
// poison() fills an output with NaN before the call, so an element the submission never wrote
// is caught; inputs_unchanged() catches a submission that scribbles on its inputs; check_output()
// compares and records the result in the case's CaseResult.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "cases.h"
#include "compare.h"
#include "tensor.h"

namespace attn {

void poison(Tensor& t);

// Records a failure in `r` and returns false if `now` differs from `before` anywhere.
bool inputs_unchanged(CaseResult& r, const std::string& name, const Tensor& before, const Tensor& now);

// Compares `got` with `want`; on failure records reason "<what>: …" and the details in `r`.
// Always records the max error and the share of tolerance used. Returns whether it passed.
bool check_output(CaseResult& r, const std::string& what, const Tensor& got, const Tensor& want, Tolerance tol,
                  const std::vector<std::string>& dims = {});

// A forward's log-sum-exp [B, H, Sq] against the expected one: +inf exactly where the expected row sees no key (so that
// a backward's exp(s − lse) is 0 there), within `tol` elsewhere; NaN (never written) fails.
bool check_lse(CaseResult& r, const std::string& what, const Tensor& got, const Tensor& want, Tolerance tol);

// Adds a diagnosis (common/diagnose.h) to a failed case's reason; nothing when it is empty.
void add_diagnosis(CaseResult& r, const std::string& diagnosis);

// Passes `r` when fn() throws E with a message naming every string of `names` (e.g. the bad
// position and the limit); otherwise records why not — `accepted` when nothing was thrown.
template <class E, class F>
void expect_throw(CaseResult& r, F&& fn, const std::vector<std::string>& names, const std::string& accepted) {
    try {
        fn();
    } catch (const E& e) {
        const std::string msg = e.what();
        for (const auto& n : names)
            if (msg.find(n) == std::string::npos) {
                r.reason = "threw, but the message does not name " + n + ": " + msg;
                return;
            }
        r.status = "passed";
        return;
    }
    r.reason = accepted;
}

// A time a runner reported (events in its process) against this side's own clock around the same
// request: it must fit inside (at most the bracket) and, where the request did little else, fill
// at least `min_share` of it. Otherwise records a failure naming both and returns false.
bool timing_agrees(CaseResult& r, const std::string& what, double reported_ms, double bracket_ms, double min_share = 0);

// Wall-clock milliseconds of fn() (informational only: benchmarks use events, not this).
template <class F>
double wall_ms(F&& fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace attn
