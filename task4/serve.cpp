// serve.cpp — runner_task4's operations: the student's kernel on staged buffers, and on inputs too
// large to send (the course's B=64 S=4096 case): those are made here from the trusted side's
// nonce by the harness's counter-based fill, which the trusted side repeats to check the output.
// The runner serves the bonus parts too; their operations live in their folders.
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/launch_log_runner.h"
#include "common/remote/serve.h"
#include "task4/task4.h"

namespace attn::remote {
// The bonus parts' operations (task4_bf16/serve.cpp, task4_backward/serve.cpp, task4_bf16_backward/serve.cpp): runner_task4
// serves all four parts.
Handlers task4_bf16_handlers();
Handlers task4_backward_handlers();
Handlers task4_bf16_backward_handlers();

Handlers task_handlers() {
    Handlers h = {
        {"flash_attention_forward", [](Call& c) {
             task4::flash_attention_forward(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("H"), c.i("Sq"), c.i("Sk"), c.i("D"),
                                            c.b("causal"));
         }},
        {"generated_inputs", [](Call& c) {  // q, k, v from seeds; returns o
             const int B = c.i("B"), H = c.i("H"), S = c.i("S"), D = c.i("D");
             const size_t n = size_t(B) * H * S * D;
             const uint64_t seed = c.args().at("seed").get<uint64_t>();
             DeviceBuffer<float> q(n), k(n), v(n), o(n);
             fill_normal(q.get(), n, seed), fill_normal(k.get(), n, seed + 1), fill_normal(v.get(), n, seed + 2);
             o.poison();
             {
                 const launch_log::Recording student_call;  // its launches, for a timeout's message
                 task4::flash_attention_forward(q.get(), k.get(), v.get(), o.get(), B, H, S, S, D, c.b("causal"));
             }
             CUDA_CHECK(cudaDeviceSynchronize());
             c.reply.buffers.push_back(o.download());
         }},
        {"timed", [](Call& c) {  // graded timing: fresh inputs from the nonce for every call
             const int B = c.i("B"), H = c.i("H"), S = c.i("S"), D = c.i("D");
             const bool causal = c.b("causal");
             const size_t n = size_t(B) * H * S * D;
             const uint64_t seed = c.args().at("seed").get<uint64_t>();
             DeviceBuffer<float> q(n), k(n), v(n), o(n);
             c.reply.head["timing"] = timed_calls(
                 c.i("calls"), seed, o.get(), n,
                 [&](int i) {
                     const uint64_t s = seed + 4 * uint64_t(i);
                     fill_normal(q.get(), n, s), fill_normal(k.get(), n, s + 1), fill_normal(v.get(), n, s + 2);
                     o.poison();
                 },
                 [&] { task4::flash_attention_forward(q.get(), k.get(), v.get(), o.get(), B, H, S, S, D, causal); });
         }},
    };
    for (Handlers part : {task4_bf16_handlers(), task4_backward_handlers(), task4_bf16_backward_handlers()}) h.insert(part.begin(), part.end());
    return h;
}

}  // namespace attn::remote
