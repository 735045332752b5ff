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
// Token ids stored as float32 in a golden file.
std::vector<int> ids_of(const attn::Tensor& t);
// Step `step` of per-step logits [steps, B, V] → [B, V].
attn::Tensor step_of(const attn::Tensor& all, int step);
// "prefill", or "step 3 (position 39)" for a prompt of S tokens.
std::string step_name(int step, int S);

// Runs `m` along a reference — prefill of the prompt [B, S], then `steps` decode steps — checking
// each step (check_step) and then forcing the reference's tokens, so one tie cannot derail the rest.
// want_tokens: [B, steps + 1]; want_logits: [steps + 1, B, V]. Model: DecoderModel, gpt2::Engine.
template <class Model>
void follow_reference(attn::CaseResult& r, Model& m, const std::vector<int>& prompt, int S, int steps,
                      const std::vector<int>& want_tokens, const attn::Tensor& want_logits, attn::Tolerance tol) {
    const int B = int(want_logits.shape[1]);
    for (int step = 0; step <= steps; ++step) {
        if (step == 0)
            m.prefill(prompt, S);
        else
            m.decode();
        const std::vector<int> theirs = column(want_tokens, B, steps + 1, step);
        if (!check_step(r, step_name(step, S), m.logits_host(), step_of(want_logits, step),
                        column(m.tokens(), B, m.length(), m.length() - 1), theirs, tol))
            return;
        m.force_newest(theirs);
    }
    r.status = "passed";
}

}  // namespace llm
