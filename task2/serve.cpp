// serve.cpp — runner_task2's operations: the student's kernels on the staged device buffers
// (common/remote/serve.h). Mirrors task2/remote.cpp.
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
    };
}

}  // namespace attn::remote
