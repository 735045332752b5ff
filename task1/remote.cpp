// remote.cpp — Task 1's interface on the trusted side: each function sends its inputs to the
// runner (runner_task1, which holds the student's code) and receives the outputs (runner.h).
#include "common/remote/proxy.h"
#include "task1/task1.h"

namespace task1 {

using namespace attn::remote;

void split_heads(const float* x, float* xh, int B, int S, int H, int D) {
    const size_t n = count({B, S, H, D});
    call("split_heads", {in(x, n), out(xh, n)}, {{"B", B}, {"S", S}, {"H", H}, {"D", D}});
}

void attention_scores(const float* qh, const float* kh, float* scores, int BH, int S, int D) {
    call("attention_scores", {in(qh, count({BH, S, D})), in(kh, count({BH, S, D})), out(scores, count({BH, S, S}))},
         {{"BH", BH}, {"S", S}, {"D", D}});
}

void apply_causal_mask(float* scores, int BH, int S) {
    call("apply_causal_mask", {inout(scores, count({BH, S, S}))}, {{"BH", BH}, {"S", S}});
}

void softmax_rows(float* x, int64_t rows, int cols) {
    call("softmax_rows", {inout(x, count({rows, cols}))}, {{"rows", rows}, {"cols", cols}});
}

void attention_output(const float* probs, const float* vh, float* oh, int BH, int S, int D) {
    call("attention_output", {in(probs, count({BH, S, S})), in(vh, count({BH, S, D})), out(oh, count({BH, S, D}))},
         {{"BH", BH}, {"S", S}, {"D", D}});
}

void merge_heads(const float* oh, float* out_, int B, int S, int H, int D) {
    const size_t n = count({B, S, H, D});
    call("merge_heads", {in(oh, n), out(out_, n)}, {{"B", B}, {"S", S}, {"H", H}, {"D", D}});
}

void naive_mha(const float* q, const float* k, const float* v, float* out_, int B, int S, int hidden, int num_heads,
               bool causal) {
    const size_t n = count({B, S, hidden});
    call("naive_mha", {in(q, n), in(k, n), in(v, n), out(out_, n)},
         {{"B", B}, {"S", S}, {"hidden", hidden}, {"H", num_heads}, {"causal", causal}});
}

}  // namespace task1
