// serve.cpp — the backward bonus's operations in runner_task4 (task4/serve.cpp adds them to Task 4's): the
// student's forward-with-LSE and backward on staged buffers. A pointer the caller passed as null (named in "null"
// by the proxy, task4_backward/remote.cpp) is null here too: the functions must refuse it by name.
#include "common/remote/serve.h"
#include "task4_backward/task4_backward.h"

namespace attn::remote {

Handlers task4_backward_handlers() {
    return {
        {"flash_attention_forward_lse", [](Call& c) {
             auto p = [&](size_t i) { return nullable(c, i); };
             task4::flash_attention_forward_lse(p(0), p(1), p(2), p(3), p(4), c.i("B"), c.i("H"), c.i("Sq"), c.i("Sk"), c.i("D"),
                                                c.b("causal"));
         }},
        {"flash_attention_backward", [](Call& c) {
             auto p = [&](size_t i) { return nullable(c, i); };
             task4::flash_attention_backward(p(0), p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), c.i("B"), c.i("H"), c.i("Sq"),
                                             c.i("Sk"), c.i("D"), c.b("causal"));
         }},
    };
}

}  // namespace attn::remote
