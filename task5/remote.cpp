// remote.cpp — Task 5's interface on the trusted side: each call runs in runner_task5 (runner.h);
// the caches travel both ways, so what the submission wrote into them is checked here.
#include "common/remote/proxy.h"
#include "task5/task5.h"

namespace task5 {

using namespace attn::remote;

void store_prefill(float* k_cache, float* v_cache, const float* k, const float* v, int B, int H, int max_seq, int S, int D) {
    const size_t nc = count({B, H, max_seq, D}), n = count({B, H, S, D});
    call("store_prefill", {dev_inout(k_cache, nc), dev_inout(v_cache, nc), dev_in(k, n), dev_in(v, n)},
         {{"B", B}, {"H", H}, {"max_seq", max_seq}, {"S", S}, {"D", D}});
}

void update_cache(float* k_cache, float* v_cache, const float* k_new, const float* v_new, int B, int H, int max_seq, int D,
                  int pos) {
    const size_t nc = count({B, H, max_seq, D}), n = count({B, H, D});
    call("update_cache", {dev_inout(k_cache, nc), dev_inout(v_cache, nc), dev_in(k_new, n), dev_in(v_new, n)},
         {{"B", B}, {"H", H}, {"max_seq", max_seq}, {"D", D}, {"pos", pos}});
}

void decode_attention(const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H, int max_seq,
                      int len, int D) {
    const size_t nc = count({B, H, max_seq, D}), n = count({B, H, D});
    call("decode_attention", {dev_in(q, n), dev_in(k_cache, nc), dev_in(v_cache, nc), dev_out(o, n)},
         {{"B", B}, {"H", H}, {"max_seq", max_seq}, {"len", len}, {"D", D}});
}

}  // namespace task5
