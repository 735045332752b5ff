// serve.cpp — the bf16 backward bonus's operations in runner_task4 (task4/serve.cpp adds it to Task 4's): the
// student's backward on staged buffers, each float word holding two bf16; a pointer the caller passed as null is
// null here too (task4_bf16_backward/remote.cpp).
#include "common/remote/serve.h"
#include "task4_bf16_backward/task4_bf16_backward.h"

namespace attn::remote {

namespace {
// Argument i as the bf16 tensor it carries (null where the caller passed null).
__nv_bfloat16* bf16_arg(Call& c, size_t i) { return reinterpret_cast<__nv_bfloat16*>(nullable(c, i)); }
}  // namespace

Handlers task4_bf16_backward_handlers() {
    return {
        {"flash_attention_backward_bf16", [](Call& c) {
             auto b = [&](size_t i) { return bf16_arg(c, i); };
             task4::flash_attention_backward_bf16(b(0), b(1), b(2), b(3), b(4), nullable(c, 5), b(6), b(7), b(8), c.i("B"), c.i("H"),
                                                  c.i("Sq"), c.i("Sk"), c.i("D"), c.b("causal"));
         }},
        {"flash_attention_forward_bf16_lse", [](Call& c) {
             auto b = [&](size_t i) { return bf16_arg(c, i); };
             task4::flash_attention_forward_bf16_lse(b(0), b(1), b(2), b(3), nullable(c, 4), c.i("B"), c.i("H"), c.i("Sq"), c.i("Sk"),
                                                     c.i("D"), c.b("causal"));
         }},
    };
}

}  // namespace attn::remote
