// history.cpp — see history.h.
#include "common/llm/history.h"

#include <fmt/format.h>

#include <stdexcept>

namespace llm {

TokenHistory::TokenHistory(int batch, int max_seq, int vocab)
    : B_(batch), max_seq_(max_seq), vocab_(vocab),
      ids_(batch >= 1 && max_seq >= 1 ? size_t(batch) * (max_seq + 1)
                                      : throw std::invalid_argument(fmt::format("token history: batch {} and max_seq {} must be ≥ 1", batch, max_seq))) {
    CUDA_CHECK(cudaMemset(ids_.get(), 0, ids_.bytes()));
}

void TokenHistory::check_ids(const std::vector<int>& ids, const char* who) const {
    for (int id : ids)
        if (id < 0 || id >= vocab_) throw std::invalid_argument(fmt::format("{}: token id {} is outside the vocabulary of {}", who, id, vocab_));
}

void TokenHistory::set_prompt(const std::vector<int>& prompt, int S) {
    if (S < 1 || S > max_seq_)
        throw std::invalid_argument(fmt::format("prefill: a prompt of {} tokens does not fit max_seq {}", S, max_seq_));
    if (prompt.size() != size_t(B_) * S)
        throw std::invalid_argument(fmt::format("prefill: {} token ids for batch {} × {} tokens", prompt.size(), B_, S));
    check_ids(prompt, "prefill");
    CUDA_CHECK(cudaMemcpy2D(ids_.get(), stride() * sizeof(int), prompt.data(), S * sizeof(int), S * sizeof(int), B_,
                            cudaMemcpyHostToDevice));
    processed = 0;
}

void TokenHistory::check_step() const {
    if (processed < 1) throw std::logic_error("decode: call prefill first");
    if (processed >= max_seq_) throw std::out_of_range(fmt::format("decode: position {} is past max_seq {}", processed, max_seq_));
}

void TokenHistory::force_newest(const std::vector<int>& tokens) {
    if (tokens.size() != size_t(B_)) throw std::invalid_argument("force_newest: one token per sequence");
    check_ids(tokens, "force_newest");
    CUDA_CHECK(cudaMemcpy2D(ids_.get() + processed, stride() * sizeof(int), tokens.data(), sizeof(int), sizeof(int), B_,
                            cudaMemcpyHostToDevice));
}

std::vector<int> TokenHistory::tokens() const {
    const int n = processed + 1;
    std::vector<int> out(size_t(B_) * n);
    CUDA_CHECK(cudaMemcpy2D(out.data(), n * sizeof(int), ids_.get(), stride() * sizeof(int), n * sizeof(int), B_,
                            cudaMemcpyDeviceToHost));
    return out;
}

}  // namespace llm
