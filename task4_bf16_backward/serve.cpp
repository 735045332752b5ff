// serve.cpp — the bf16 backward bonus's operations in runner_task4 (task4/serve.cpp adds it to Task 4's): the
// student's backward on staged buffers, each float word holding two bf16; a pointer the caller passed as null is
// null here too (task4_bf16_backward/remote.cpp); and the graded timing of the backward.
#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/serve.h"
#include "task4_bf16_backward/task4_bf16_backward.h"
#include "task4_bf16_backward/timed_inputs.h"

namespace attn::remote {

namespace {
// Argument i as the bf16 tensor it carries (null where the caller passed null).
__nv_bfloat16* bf16_arg(Call& c, size_t i) { return reinterpret_cast<__nv_bfloat16*>(nullable(c, i)); }

// Graded timing of flash_attention_backward_bf16 (grader/timed.cpp): `calls` calls on fresh inputs (timed_inputs.h),
// dq, dk and dv poisoned before each and read as floats after it, three fingerprints a call.
void timed_backward(Call& c) {
    namespace timed = task4::bf16_backward_timed;
    const timed::Geometry g{c.i("B"), c.i("H"), c.i("S"), c.i("D"), c.b("causal")};
    const uint64_t seed = c.args().at("seed").get<uint64_t>();
    const size_t n = g.elements();
    DeviceBuffer<uint16_t> q(n), k(n), v(n), o(n), dout(n), dq(n), dk(n), dv(n);
    DeviceBuffer<float> lse(g.rows()), grads(3 * n);  // dq, dk, dv as floats, one after another
    const std::vector<float> l = timed::lse(g);
    CUDA_CHECK(cudaMemcpy(lse.get(), l.data(), lse.bytes(), cudaMemcpyHostToDevice));
    auto bf16 = [](const DeviceBuffer<uint16_t>& b) { return reinterpret_cast<__nv_bfloat16*>(b.get()); };
    c.reply.head["timing"] = timed_calls(
        c.i("calls"), seed, {{grads.get(), n}, {grads.get() + n, n}, {grads.get() + 2 * n, n}},
        [&](int i) {
            const uint64_t s = seed + 4 * uint64_t(i);
            fill_normal_bf16(q.get(), n, s), fill_normal_bf16(k.get(), n, s + 1), fill_normal_bf16(v.get(), n, s + 2);
            fill_normal_bf16(o.get(), n, timed::o_seed(s)), fill_normal_bf16(dout.get(), n, timed::dout_seed(s));
            dq.poison(), dk.poison(), dv.poison();
        },
        [&] {
            task4::flash_attention_backward_bf16(bf16(q), bf16(k), bf16(v), bf16(o), bf16(dout), lse.get(), bf16(dq), bf16(dk),
                                                 bf16(dv), g.B, g.H, g.S, g.S, g.D, g.causal);
        },
        [&] {
            for (int t = 0; t < 3; ++t) task4::bf16_convert::from_bf16(bf16(t == 0 ? dq : t == 1 ? dk : dv), grads.get() + t * n, n);
        });
}
}  // namespace

Handlers task4_bf16_backward_handlers() {
    return {
        {"timed_bf16_backward", timed_backward},
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
