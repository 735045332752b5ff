// remote.cpp — Task 2's interface on the trusted side: each function sends its device buffers to
// the runner (runner_task2, which holds the student's kernels) and copies the results back.
#include "common/remote/proxy.h"
#include "task2/task2.h"

namespace task2 {

using namespace attn::remote;

void softmax_batched(const float* in, float* out, int rows, int cols) {
    const size_t n = count({rows, cols});
    call("softmax_batched", {dev_in(in, n), dev_out(out, n)}, {{"rows", rows}, {"cols", cols}});
}

void gemm_nt(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    call("gemm_nt", {dev_in(A, count({batch, M, K})), dev_in(B, count({batch, N, K})), dev_out(C, count({batch, M, N}))},
         {{"batch", batch}, {"M", M}, {"N", N}, {"K", K}});
}

void gemm_nn(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    call("gemm_nn", {dev_in(A, count({batch, M, K})), dev_in(B, count({batch, K, N})), dev_out(C, count({batch, M, N}))},
         {{"batch", batch}, {"M", M}, {"N", N}, {"K", K}});
}

void scale_and_causal_mask(float* scores, int batch, int rows, int cols, float scale, bool causal) {
    call("scale_and_causal_mask", {dev_inout(scores, count({batch, rows, cols}))},
         {{"batch", batch}, {"rows", rows}, {"cols", cols}, {"scale", scale}, {"causal", causal}});
}

void split_heads(const float* x, float* xh, int B, int S, int H, int D) {
    const size_t n = count({B, S, H, D});
    call("split_heads", {dev_in(x, n), dev_out(xh, n)}, {{"B", B}, {"S", S}, {"H", H}, {"D", D}});
}

void merge_heads(const float* xh, float* x, int B, int S, int H, int D) {
    const size_t n = count({B, S, H, D});
    call("merge_heads", {dev_in(xh, n), dev_out(x, n)}, {{"B", B}, {"S", S}, {"H", H}, {"D", D}});
}

void custom_attention(const float* q, const float* k, const float* v, float* out, int B, int S, int hidden, int num_heads,
                      bool causal) {
    const size_t n = count({B, S, hidden});
    call("custom_attention", {dev_in(q, n), dev_in(k, n), dev_in(v, n), dev_out(out, n)},
         {{"B", B}, {"S", S}, {"hidden", hidden}, {"H", num_heads}, {"causal", causal}});
}

void attention_heads(const float* q, const float* k, const float* v, float* out, int BH, int S, int D, bool causal,
                     float* scores) {
    const size_t n = count({BH, S, D});
    call("attention_heads", {dev_in(q, n), dev_in(k, n), dev_in(v, n), dev_out(out, n), dev_out(scores, count({BH, S, S}))},
         {{"BH", BH}, {"S", S}, {"D", D}, {"causal", causal}});
}

}  // namespace task2
