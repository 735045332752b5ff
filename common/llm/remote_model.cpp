// remote_model.cpp — see remote_model.h; the runner's side is common/llm/model_serve.h.
#include "common/llm/remote_model.h"

#include "common/remote/runner.h"

namespace llm {

using attn::remote::Message;
using attn::remote::request;

RemoteModel::RemoteModel(const nlohmann::json& spec, int batch, int vocab) : B_(batch), vocab_(vocab), rows_(size_t(batch)) {
    Message m;
    m.head = {{"op", "model_new"}, {"args", spec}};
    request(m, {});
}

void RemoteModel::step(nlohmann::json args) {
    Message m;
    m.head = {{"op", args.contains("prompt") ? "model_prefill" : "model_decode"}, {"args", std::move(args)}};
    const Message reply = request(m, {size_t(B_) * vocab_});
    const std::vector<int> next = reply.head.at("next").get<std::vector<int>>();
    if (int(next.size()) != B_) throw attn::remote::RunnerFailure("the runner's reply has the wrong number of tokens");
    for (int b = 0; b < B_; ++b) rows_[size_t(b)].push_back(next[size_t(b)]);
    ++length_;
    logits_ = attn::Tensor({B_, vocab_});
    logits_.data = reply.buffers[0];
}

void RemoteModel::prefill(const std::vector<int>& prompt, int S) {
    for (int b = 0; b < B_; ++b) rows_[size_t(b)].assign(prompt.begin() + long(b) * S, prompt.begin() + long(b + 1) * S);
    length_ = S;
    forced_.clear();
    step({{"prompt", prompt}, {"S", S}});
}

void RemoteModel::decode() {
    nlohmann::json args = nlohmann::json::object();
    if (!forced_.empty()) args["force"] = forced_;
    forced_.clear();
    step(args);
}

void RemoteModel::force_newest(const std::vector<int>& tokens) {
    for (int b = 0; b < B_; ++b) rows_[size_t(b)].back() = tokens[size_t(b)];
    forced_ = tokens;
}

std::vector<int> RemoteModel::tokens() const {
    std::vector<int> all;
    for (const auto& r : rows_) all.insert(all.end(), r.begin(), r.end());
    return all;
}

}  // namespace llm
