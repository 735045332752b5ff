// Task 1 — naive multi-head attention on the CPU, one function per step.
//
// Build and run:  make task1            (your skeleton)
//                 make task1 IMPL=reference
// The steps follow the course: split heads → transpose → QKᵀ/√d → causal mask → softmax → ·V →
// merge heads. Each TODO names its step; an unwritten step reports "task1.N not implemented".
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "task1/task1.h"
#include "common/todo.h"

namespace task1 {

void split_heads(const float* x, float* xh, int B, int S, int H, int D) {
    // TODO(task1.1): x is [B, S, H, D] when you read its hidden dim as H heads of D; write it
    // out as [B, H, S, D]. Element (b, s, h, d) of x sits at ((b·S + s)·H + h)·D + d.
    (void)x, (void)xh, (void)B, (void)S, (void)H, (void)D;
    ATTNLAB_TODO("task1.1");
}

void attention_scores(const float* qh, const float* kh, float* scores, int BH, int S, int D) {
    // TODO(task1.2): for every head, scores[i][j] = (q_i · k_j) / sqrt(D).
    (void)qh, (void)kh, (void)scores, (void)BH, (void)S, (void)D;
    ATTNLAB_TODO("task1.2");
}

void apply_causal_mask(float* scores, int BH, int S) {
    // TODO(task1.3): query i may attend to keys 0..i only. Set the rest to -infinity
    // (std::numeric_limits<float>::infinity()), so that softmax turns them into exact zeros.
    (void)scores, (void)BH, (void)S;
    ATTNLAB_TODO("task1.3");
}

void softmax_rows(float* x, int64_t rows, int cols) {
    // TODO(task1.4): softmax of each row. Subtract the row's maximum before exp(): exp(x) overflows
    // to inf for x > 88 in float32, and the tests feed large scores on purpose.
    (void)x, (void)rows, (void)cols;
    ATTNLAB_TODO("task1.4");
}

void attention_output(const float* probs, const float* vh, float* oh, int BH, int S, int D) {
    // TODO(task1.5): oh = probs · vh for every head: row i of the output is the probability-weighted
    // sum of the value rows.
    (void)probs, (void)vh, (void)oh, (void)BH, (void)S, (void)D;
    ATTNLAB_TODO("task1.5");
}

void merge_heads(const float* oh, float* out, int B, int S, int H, int D) {
    // TODO(task1.6): the inverse of split_heads: [B, H, S, D] back to [B, S, H·D].
    (void)oh, (void)out, (void)B, (void)S, (void)H, (void)D;
    ATTNLAB_TODO("task1.6");
}

// Given: the steps in order. The scratch buffers hold [BH, S, S] scores — the O(S²) memory
// that Task 3 (FlashAttention) removes.
void naive_mha(const float* q, const float* k, const float* v, float* out, int B, int S, int hidden, int num_heads,
               bool causal) {
    const int H = num_heads, D = hidden / num_heads, BH = B * H;
    std::vector<float> qh(size_t(BH) * S * D), kh(qh.size()), vh(qh.size()), oh(qh.size());
    std::vector<float> scores(size_t(BH) * S * S);
    split_heads(q, qh.data(), B, S, H, D);
    split_heads(k, kh.data(), B, S, H, D);
    split_heads(v, vh.data(), B, S, H, D);
    attention_scores(qh.data(), kh.data(), scores.data(), BH, S, D);
    if (causal) apply_causal_mask(scores.data(), BH, S);
    softmax_rows(scores.data(), int64_t(BH) * S, S);
    attention_output(scores.data(), vh.data(), oh.data(), BH, S, D);
    merge_heads(oh.data(), out, B, S, H, D);
}

}  // namespace task1
