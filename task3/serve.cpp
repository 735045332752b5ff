// serve.cpp — runner_task3's operation: the student's FlashAttention on the CPU.
#include "common/remote/serve.h"
#include "task3/task3.h"

namespace attn::remote {

Handlers task_handlers() {
    return {{"flash_attention_cpu", [](Call& c) {
                 task3::flash_attention_cpu(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("H"), c.i("S"), c.i("D"), c.i("Br"),
                                            c.i("Bc"), c.b("causal"));
             }}};
}

}  // namespace attn::remote
