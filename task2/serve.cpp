// serve.cpp — runner_task2's operations: the student's kernels on the staged device buffers
// (common/remote/serve.h), mirroring task2/remote.cpp, and the grader's timing of the softmax and
// the GEMMs on inputs made here from its nonce (the grader repeats them to check the output).
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/serve.h"
#include "task2/task2.h"

namespace attn::remote {

Handlers task_handlers() {
    using namespace task2;
    return {
        {"softmax_batched", [](Call& c) { softmax_batched(c.p(0), c.p(1), c.i("rows"), c.i("cols")); }},
        {"gemm_nt", [](Call& c) { gemm_nt(c.p(0), c.p(1), c.p(2), c.i("batch"), c.i("M"), c.i("N"), c.i("K")); }},
        {"gemm_nn", [](Call& c) { gemm_nn(c.p(0), c.p(1), c.p(2), c.i("batch"), c.i("M"), c.i("N"), c.i("K")); }},
        {"scale_and_causal_mask", [](Call& c) {
             scale_and_causal_mask(c.p(0), c.i("batch"), c.i("rows"), c.i("cols"), float(c.d("scale")), c.b("causal"));
         }},
        {"split_heads", [](Call& c) { split_heads(c.p(0), c.p(1), c.i("B"), c.i("S"), c.i("H"), c.i("D")); }},
        {"merge_heads", [](Call& c) { merge_heads(c.p(0), c.p(1), c.i("B"), c.i("S"), c.i("H"), c.i("D")); }},
        {"custom_attention", [](Call& c) {
             custom_attention(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("S"), c.i("hidden"), c.i("H"), c.b("causal"));
         }},
        {"attention_heads", [](Call& c) {
             attention_heads(c.p(0), c.p(1), c.p(2), c.p(3), c.i("BH"), c.i("S"), c.i("D"), c.b("causal"), c.p(4));
         }},
        {"timed", [](Call& c) {  // kind "softmax" (rows, cols) or "gemm_nn" / "gemm_nt" (M, N, K); fresh inputs per call
             const std::string kind = c.args().at("kind");
             const uint64_t seed = c.args().at("seed").get<uint64_t>();
             const bool softmax = kind == "softmax";
             const int M = softmax ? c.i("rows") : c.i("M"), N = softmax ? c.i("cols") : c.i("N"), K = softmax ? 0 : c.i("K");
             DeviceBuffer<float> a(softmax ? size_t(M) * N : size_t(M) * K), b(softmax ? 1 : size_t(K) * N), out(size_t(M) * N);
             c.reply.head["timing"] = timed_calls(
                 c.i("calls"), seed, out.get(), out.size(),
                 [&](int i) {
                     const uint64_t s = seed + 4 * uint64_t(i);
                     fill_normal(a.get(), a.size(), s), fill_normal(b.get(), b.size(), s + 1);
                     out.poison();
                 },
                 [&] {
                     if (softmax) softmax_batched(a.get(), out.get(), M, N);
                     else if (kind == "gemm_nt") gemm_nt(a.get(), b.get(), out.get(), 1, M, N, K);
                     else gemm_nn(a.get(), b.get(), out.get(), 1, M, N, K);
                 });
         }},
    };
}

}  // namespace attn::remote
