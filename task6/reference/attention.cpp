// Task 6 — the attention step of an LLM's inference loop: prefill or decode, with the KV cache.
//
// Build and run:  make task6                      (your skeleton: tests; needs a GPU)
//                 make task6 IMPL=reference       make bench-task6 IMPL=reference
// The model (task6/model.cpp, given) calls this once per layer: on the prompt (pos == 0) and then
// once per generated token (S == 1). Your Task-4 and Task-5 functions do the work; this file
// decides which runs, and keeps the cache in step with the tokens.
#include <stdexcept>
#include <string>

#include "common/todo.h"
#include "task4/task4.h"
#include "task5/task5.h"
#include "task6/task6.h"

namespace task6 {

void attention_forward(const float* q, const float* k, const float* v, float* o, const LayerCache& cache, int B, int H,
                       int S, int D, int pos) {
#if SOLUTION
    const auto where = [&] {
        return "S=" + std::to_string(S) + ", pos=" + std::to_string(pos) + ", max_seq=" + std::to_string(cache.max_seq);
    };
    if (pos < 0 || S < 1 || pos + S > cache.max_seq)
        throw std::invalid_argument("attention_forward: the tokens do not fit the cache (" + where() + ")");
    if (pos == 0) {
        // task6.1 — prefill: the whole prompt at once, then its K and V into the cache.
        task4::flash_attention_forward(q, k, v, o, B, H, S, S, D, /*causal=*/true);
        task5::store_prefill(cache.k, cache.v, k, v, B, H, cache.max_seq, S, D);
        return;
    }
    if (S != 1)
        throw std::invalid_argument("attention_forward: neither prefill (pos == 0) nor decode (S == 1): " + where());
    // task6.2 — decode: append this token's K and V, then attend to positions 0 … pos.
    task5::update_cache(cache.k, cache.v, k, v, B, H, cache.max_seq, D, pos);
    task5::decode_attention(q, cache.k, cache.v, o, B, H, cache.max_seq, pos + 1, D);
#else
    (void)q, (void)k, (void)v, (void)o, (void)cache, (void)B, (void)H, (void)S, (void)D;
    // TODO: detect the phase. pos == 0 is the prefill (task6.1): causal attention over the S
    // tokens with your Task-4 kernel, then task5::store_prefill. pos ≥ 1 with S == 1 is a decode
    // step (task6.2): task5::update_cache at pos, then task5::decode_attention over pos + 1
    // positions. Anything else: throw std::invalid_argument naming S, pos and cache.max_seq.
    if (pos == 0) ATTNLAB_TODO("task6.1");
    ATTNLAB_TODO("task6.2");
#endif
}

}  // namespace task6
