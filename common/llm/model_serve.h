// model_serve.h — the runner's side of llm::RemoteModel: one model held between requests, stepped
// by "model_prefill" / "model_decode" (a "force" list of tokens replaces the newest first). Each
// step replies with the newest logits and the token the model chose. Model: task6::DecoderModel,
// gpt2::Engine.
#pragma once
#include <memory>

#include "common/remote/serve.h"

namespace llm {

template <class Model>
void add_model_steps(attn::remote::Handlers& h, std::unique_ptr<Model>& model) {
    auto reply_step = [&model](attn::remote::Call& c) {
        const int B = int(model->logits_host().shape[0]);
        const std::vector<int> all = model->tokens();
        std::vector<int> next(static_cast<size_t>(B));
        for (int b = 0; b < B; ++b) next[size_t(b)] = all[size_t(b) * model->length() + size_t(model->length() - 1)];
        c.reply.head["next"] = next;
        c.reply.buffers.push_back(model->logits_host().data);
    };
    h["model_prefill"] = [&model, reply_step](attn::remote::Call& c) {
        if (!model) throw std::logic_error("no model (model_new first)");
        model->prefill(c.args().at("prompt").get<std::vector<int>>(), c.i("S"));
        reply_step(c);
    };
    h["model_decode"] = [&model, reply_step](attn::remote::Call& c) {
        if (!model) throw std::logic_error("no model (model_new first)");
        if (c.args().contains("force")) model->force_newest(c.args().at("force").get<std::vector<int>>());
        model->decode();
        reply_step(c);
    };
}

}  // namespace llm
