// serve.cpp — runner_task6's operations: attention_forward on staged buffers, and the model of
// task6/model.h on the student's attention, held between requests and stepped by the trusted side
// (llm::RemoteModel); "model_time" times a whole generation and "model_no_cache" the no-cache step
// with events — times the trusted side checks against its own clock.
#include <cmath>
#include <memory>

#include "common/llm/model_serve.h"
#include "common/remote/serve.h"
#include "task6/model.h"
#include "task6/task6.h"
#include "task6/timing.h"

namespace attn::remote {

Handlers task6_serve_handlers();  // the serving part's operations (task6_serve/serve.cpp): runner_task6 serves both parts

namespace {

std::unique_ptr<task6::DecoderModel> model;

task6::ModelConfig config_of(const Call& c) {
    task6::ModelConfig m;
    m.vocab = c.i("vocab"), m.hidden = c.i("hidden"), m.heads = c.i("heads"), m.layers = c.i("layers"), m.ffn = c.i("ffn");
    m.batch = c.i("batch"), m.max_seq = c.i("max_seq"), m.seed = c.args().at("seed").get<uint64_t>();
    return m;
}

task6::Attention mode_of(const std::string& name) {
    if (name == "kv_cache") return task6::Attention::kv_cache;
    if (name == "recompute") return task6::Attention::recompute;
    throw std::invalid_argument("a runner's model uses the student's attention (kv_cache or recompute), not " + name);
}

}  // namespace

Handlers task_handlers() {
    Handlers h = {
        {"attention_forward", [](Call& c) {
             task6::attention_forward(c.p(0), c.p(1), c.p(2), c.p(3), {c.p(4), c.p(5), c.i("max_seq")}, c.i("B"), c.i("H"),
                                      c.i("S"), c.i("D"), c.i("pos"));
         }},
        {"model_new", [](Call& c) {
             model.reset();
             model = std::make_unique<task6::DecoderModel>(std::make_shared<task6::Weights>(config_of(c)), mode_of(c.s("mode")));
         }},
        {"model_time", [](Call& c) {  // prefill + steps, timed with events
             const task6::GenerationTiming t =
                 task6::time_generation(*model, c.args().at("prompt").get<std::vector<int>>(), c.i("S"), c.i("steps"));
             c.reply.head["ttft_ms"] = t.ttft_ms;
             c.reply.head["tbt_ms"] = t.tbt_ms;
             c.reply.head["tokens"] = model->tokens();  // the grader recomputes the last step from them
             c.reply.head["length"] = model->length();
             c.reply.buffers.push_back(model->logits_host().data);
         }},
        {"model_no_cache", [](Call& c) {  // the same weights without the cache: every step recomputes
             model.reset();  // the cached model's memory back first
             model = std::make_unique<task6::DecoderModel>(std::make_shared<task6::Weights>(config_of(c)),
                                                           task6::Attention::recompute);
             model->prefill(c.args().at("prompt").get<std::vector<int>>(), c.i("S"));
             c.reply.head["step_ms"] = task6::median_step_ms(*model, c.i("steps"));
         }},
    };
    llm::add_model_steps(h, model);
    for (auto& [op, fn] : task6_serve_handlers()) h.emplace(op, fn);
    return h;
}

}  // namespace attn::remote
