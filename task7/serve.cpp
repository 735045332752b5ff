// serve.cpp — runner_task7's operations: GPT-2 (task7/gpt2.h) on the student's Tasks 4–6, held
// between requests and stepped by the trusted side (llm::RemoteModel). The runner sees the
// checkpoint's weights (read-only), never the reference's tokens or logits.
#include <memory>

#include "common/llm/model_serve.h"
#include "common/remote/serve.h"
#include "task7/gpt2.h"

namespace attn::remote {

namespace {
std::unique_ptr<gpt2::Engine> engine;
}

Handlers task_handlers() {
    Handlers h = {
        {"model_new", [](Call& c) {
             engine.reset();
             engine = std::make_unique<gpt2::Engine>(gpt2::Checkpoint::load(c.s("checkpoint")), c.i("batch"), c.i("max_seq"));
             engine->set_sampling({c.i("top_k"), float(c.d("temperature")), c.args().at("seed").get<uint64_t>()});
         }},
    };
    llm::add_model_steps(h, engine);
    return h;
}

}  // namespace attn::remote
