// remote_model.h — a language model that runs in the runner (Tasks 6 and 7: the student's kernels
// inside), driven step by step from the trusted side. It has the interface llm::follow_reference
// and the oracle checks use — prefill, decode, force_newest, tokens, logits_host — and keeps the
// token history here: the runner only ever hears which tokens to use, never what is expected.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "common/tensor.h"

namespace llm {

class RemoteModel {
public:
    // `spec`: the task's description of the model (config and attention mode, or a checkpoint).
    RemoteModel(const nlohmann::json& spec, int batch, int vocab);
    void prefill(const std::vector<int>& prompt, int S);
    void decode();
    void force_newest(const std::vector<int>& tokens);
    std::vector<int> tokens() const;  // [B, length()]
    int length() const { return length_; }
    attn::Tensor logits_host() const { return logits_; }

private:
    void step(nlohmann::json args);
    int B_, vocab_, length_ = 0;
    std::vector<std::vector<int>> rows_;  // per sequence
    std::vector<int> forced_;
    attn::Tensor logits_;
};

}  // namespace llm
