// digest.h — a fingerprint of a device tensor that a timed call's output is judged by, as strictly as a checked
// call's output is judged element by element.
//
// A timed call's output is fingerprinted right after the call (in the runner, on the default stream); the trusted
// side fingerprints the oracle's output for the same inputs and compares the two, for every timed call.
// Besides the sums that tell outputs apart (sum, sum of squares, non-finite count, sum of magnitudes) the
// fingerprint holds kProjections random ±1 projections Σ rₖ(i)·xᵢ, the signs rₖ(i) drawn from a hash of
// (sign_seed, i). For got = want + e, the difference of projection k is Σ rₖ(i)·eᵢ, whose square has the
// expectation Σ eᵢ² whatever e is (the signs are independent of it): the mean of the kProjections squared
// differences estimates ‖e‖², the output's squared error, without either side holding both outputs. Its root, over
// the root of Σ (atol + rtol·|wantᵢ|)² (a checked call's tolerance, from want's n, Σ|x| and Σx²), is the output's
// RMS error in tolerances. A timed call must be as accurate as the fp32 arithmetic its checked calls are held
// to: at most kTimedErrorAllowance (0.05) of the tolerance in RMS. fp32 arithmetic in any order of summation lands
// far under it (the references at 0.0002–0.002 on an H100), lower precision (bf16, fp16, one-pass TF32: 0.17 and
// more) and approximations far above; a checked call's own limit (its largest error at the tolerance: an RMS of
// about 1/√(2 ln n) ≥ 0.15 for noise-like errors) lies above it too. docs/grader.md gives the figures per shape.
// Knowing the signs does not help a submission: making the projections of its error vanish needs the error, and
// so the exact output.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/compare.h"

namespace attn {

constexpr int kProjections = 32;
// Doubles of one fingerprint in device memory: sum, sum of squares, non-finite count, sum of magnitudes, projections.
constexpr int kDigestSlots = 4 + kProjections;

struct Digest {
    double sum = 0, sumsq = 0, nonfinite = 0, sumabs = 0;
    std::array<double, kProjections> proj{};
};

// Enqueued on the default stream; returns once it is done.
Digest digest(const float* d, size_t n, uint64_t sign_seed);

// Enqueued on the default stream, returns at once: adds d's fingerprint into slot[0 .. kDigestSlots) (device
// memory, zeroed by the caller).
void digest_into(const float* d, size_t n, uint64_t sign_seed, double* slot);

// A fingerprint as the runner sends it (a JSON array of kDigestSlots numbers) and back.
Digest digest_from_slots(const double* slots);

// How far `got` is from `want` (both fingerprinted with the same sign seed), in units of the tolerance:
// √(estimated ‖got − want‖² / Σ (atol + rtol·|wantᵢ|)²). Under 1: within a checked call's tolerance.
double digest_error_ratio(const Digest& got, const Digest& want, size_t n, Tolerance tol);

// ‖got − want‖ / ‖want‖ estimated the same way (‖want‖ from want's Σw²): the relative L2 error that 4d's cases bound
// for each gradient. Infinite when want is zero and got is not.
double digest_relative_error(const Digest& got, const Digest& want);

// The largest digest_error_ratio a timed call may have.
constexpr double kTimedErrorAllowance = 0.05;
// The same for a bf16 output (part 5b): the kernels round probabilities to bf16 before P·V, and the references land at
// 0.005–0.032 (H100 and H200, docs/perf.md "5b's timing"); a lower precision inside (fp8 K and V, keys skipped) lands
// far above.
constexpr double kTimedErrorAllowanceBf16 = 0.1;

// Whether a timed call's fingerprint passes: finite everywhere, and its estimated error within the allowance.
bool digests_agree(const Digest& got, const Digest& want, size_t n, Tolerance tol, double allowance = kTimedErrorAllowance);

}  // namespace attn
