// diagnose_kernels.h — what a wrong GEMM or softmax output of Task 2 is, in words a student can act on (the attention
// outputs have common/diagnose.h).
//
// When an output fails its check, the trusted side computes, in double precision on the same inputs, the answers of
// the common mistakes and names the one the output matches (every checked element within the tolerance of it):
//   GEMM     B read untransposed (or transposed where it must not be), the last partial tile of K dropped (tiles of
//            8…128), every batch using batch 0's B;
//   softmax  no division by the row's sum, the max and sum taken over the whole blocks of columns only (the last
//            partial block of 32…1024 left out of the reduction), softmax over the wrong axis.
// Where none matches, it says where the failing elements are (rows, columns, batches; "the last partial tile of 64").
// Large inputs are tried on their first rows (at most ~5·10⁷ multiply-adds a variant), which the sentence says. An
// output that is one value everywhere is left to the comparison ("output is all zeros").
#pragma once
#include <string>

#include "common/compare.h"
#include "common/tensor.h"

namespace attn {

// got [batch, M, N]; a [batch, M, K]; b [batch, N, K] when nt (A·Bᵀ), else [batch, K, N] (A·B). "" when nothing to say.
std::string diagnose_gemm(const Tensor& got, const Tensor& a, const Tensor& b, bool nt, Tolerance tol);
// got, x: [rows, cols] (any leading dimensions flattened into rows), softmax along each row.
std::string diagnose_softmax(const Tensor& got, const Tensor& x, Tolerance tol);

}  // namespace attn
