// digest.h — a small fingerprint of a device tensor: the sum and the sum of squares of its
// elements (in double) and the count of non-finite ones. A timed call's output is fingerprinted
// right after the call, so the trusted side can check, for calls it picks afterwards, that the
// work was really done on that call's inputs.
#pragma once
#include <cstddef>

namespace attn {

struct Digest {
    double sum = 0, sumsq = 0, nonfinite = 0;
};

// Enqueued on the default stream; returns once it is done.
Digest digest(const float* d, size_t n);

// Enqueued on the default stream, returns at once: adds d's sum, sum of squares and non-finite
// count into slot[0..2] (device memory, zeroed by the caller).
void digest_into(const float* d, size_t n, double* slot);

// Whether two digests of outputs that should agree within float tolerance do.
bool digests_agree(const Digest& got, const Digest& want, size_t n);

}  // namespace attn
