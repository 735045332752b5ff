// serve.cpp — runner_task1's operations: each calls the student's function on the buffers the
// trusted side sent (common/remote/serve.h). Mirrors task1/remote.cpp.
#include "common/remote/serve.h"
#include "task1/task1.h"

namespace attn::remote {

Handlers task_handlers() {
    return {
        {"split_heads", [](Call& c) { task1::split_heads(c.p(0), c.p(1), c.i("B"), c.i("S"), c.i("H"), c.i("D")); }},
        {"attention_scores", [](Call& c) { task1::attention_scores(c.p(0), c.p(1), c.p(2), c.i("BH"), c.i("S"), c.i("D")); }},
        {"apply_causal_mask", [](Call& c) { task1::apply_causal_mask(c.p(0), c.i("BH"), c.i("S")); }},
        {"softmax_rows", [](Call& c) { task1::softmax_rows(c.p(0), c.args().at("rows").get<int64_t>(), c.i("cols")); }},
        {"attention_output", [](Call& c) { task1::attention_output(c.p(0), c.p(1), c.p(2), c.i("BH"), c.i("S"), c.i("D")); }},
        {"merge_heads", [](Call& c) { task1::merge_heads(c.p(0), c.p(1), c.i("B"), c.i("S"), c.i("H"), c.i("D")); }},
        {"naive_mha", [](Call& c) {
             task1::naive_mha(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("S"), c.i("hidden"), c.i("H"), c.b("causal"));
         }},
    };
}

}  // namespace attn::remote
