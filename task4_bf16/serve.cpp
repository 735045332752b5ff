// serve.cpp — the bf16 bonus's operations in runner_task4 (task4/serve.cpp adds them to Task 4's): the student's
// bf16 kernel on staged buffers, each float word holding two bf16.
#include "common/remote/serve.h"
#include "task4_bf16/task4_bf16.h"

namespace attn::remote {

Handlers task4_bf16_handlers() {
    return {
        {"flash_attention_forward_bf16", [](Call& c) {
             auto b = [&](size_t i) { return reinterpret_cast<__nv_bfloat16*>(c.p(i)); };
             task4::flash_attention_forward_bf16(b(0), b(1), b(2), b(3), c.i("B"), c.i("H"), c.i("Sq"), c.i("Sk"), c.i("D"),
                                                 c.b("causal"));
         }},
    };
}

}  // namespace attn::remote
