// greedy_check.h — one generation step against a reference (Tasks 6 and 7): the logits within the
// tolerance, then each sequence's greedy token equal to the reference's — unless the reference's
// logits of the two tokens are within the tolerance of each other (a tie in float32), where
// either choice is right and the run follows the reference's.
#pragma once
#include <string>
#include <vector>

#include "common/cases.h"
#include "common/compare.h"
#include "common/tensor.h"

namespace llm {

// got, want: [B, vocab]; ours, theirs: one token per sequence. Records a failure in r.
bool check_step(attn::CaseResult& r, const std::string& step, const attn::Tensor& got, const attn::Tensor& want,
                const std::vector<int>& ours, const std::vector<int>& theirs, attn::Tolerance tol);

// Column c of a row-major [B, cols] table of token ids.
std::vector<int> column(const std::vector<int>& rows, int B, int cols, int c);

// Text for a report: invalid UTF-8 (a token may end inside a character) becomes U+FFFD.
std::string printable(const std::string& bytes);

}  // namespace llm
