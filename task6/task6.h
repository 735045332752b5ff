// task6.h — Task 6: the attention of an LLM's inference loop. The frozen interface.
//
// The model (task6/model.h, given) calls attention_forward once per layer and step with that
// layer's cache. q, k, v, o: [B, H, S, D] device pointers (RoPE already applied to q and k) for
// the S new tokens at positions pos … pos + S − 1. The cache: [B, H, max_seq, D] each, device
// memory, preallocated once (Task 5's layout). Causal. Work goes on the default stream.
//   prefill  pos == 0, S ≥ 1:  o = causal attention of the S tokens (your Task-4 kernel), and
//                              their K and V stored into cache positions 0 … S − 1
//   decode   pos ≥ 1, S == 1:  the token's K and V appended at `pos` (Task 5's update_cache), o =
//                              its attention over positions 0 … pos (Task 5's decode kernel)
//   anything else (pos ≥ 1 with S > 1, pos < 0, pos + S > max_seq) throws std::invalid_argument
//   naming S, pos and max_seq.
#pragma once

namespace task6 {

struct LayerCache {
    float* k = nullptr;
    float* v = nullptr;
    int max_seq = 0;
};

void attention_forward(const float* q, const float* k, const float* v, float* o, const LayerCache& cache, int B, int H,
                       int S, int D, int pos);

}  // namespace task6
