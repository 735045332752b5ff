// diagnose.h — what a wrong attention output is, in words a student can act on.
//
// When an output fails its check, the trusted side computes, in double precision on the same inputs,
// the answers of the common mistakes — no causal mask, a mask where none was asked, the mask aligned
// top-left when Sq ≠ Sk, the mask off by one either way, no 1/√D or 1/D instead, only the first Sq
// keys, the keys past the last whole tile dropped, K read untransposed, softmax over the queries,
// heads swapped with one another — and names the one the output matches (every element within
// the tolerance of that answer). Where none matches, it says where the error lives: which query
// rows, heads and head dimensions hold the failing elements.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/compare.h"
#include "common/tensor.h"

namespace attn {

// An attention case's sizes from q [.., Sq, D] and k [.., Sk, D], the leading dimensions (B, H) flattened into BH.
struct AttentionSizes {
    int64_t BH, Sq, Sk, D;
};
AttentionSizes attention_sizes(const Tensor& q, const Tensor& k);

// got, q: [.., Sq, D]; k, v: [.., Sk, D], the leading dimensions (B, H) flattened alike. A sentence
// for a failure's reason ("it matches attention without the causal mask …"), or "" when the inputs
// are too large to try the variants (they cost one double-precision attention each). `tiles`: the
// kernel's (query rows, keys) per tile where the task fixes them (Task 3's Br, Bc); otherwise the
// usual sizes are tried.
std::string diagnose_attention(const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                               Tolerance tol, std::vector<std::pair<int64_t, int64_t>> tiles = {});
// The same for tensors in the [B, S, H·D] layout (Tasks 1 and 2), split into H heads first.
std::string diagnose_attention_bse(const Tensor& got, const Tensor& q, const Tensor& k, const Tensor& v, int H, bool causal,
                                   Tolerance tol);

// Where failing elements are, in the words every diagnosis uses (common/diagnose_kernels.h too): of the indices
// 0…n−1, those in `failing` — "query rows 64…99 only (of 0…99): the last partial tile of 64" (with `tiles`, when
// they are the last partial tile of 16…256), "12 of the 100 rows, between 3…97", or "" when all of them fail.
std::string failing_only(const std::set<int64_t>& failing, int64_t n, const std::string& noun, bool tiles = true);

}  // namespace attn
