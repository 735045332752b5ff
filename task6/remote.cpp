// remote.cpp — Task 6's interface on the trusted side: attention_forward runs in runner_task6
// (runner.h). Whole generations run there too, through llm::RemoteModel (task6/serve.cpp).
#include "common/remote/proxy.h"
#include "task6/task6.h"

namespace task6 {

using namespace attn::remote;

void attention_forward(const float* q, const float* k, const float* v, float* o, const LayerCache& cache, int B, int H, int S,
                       int D, int pos) {
    const size_t n = count({B, H, S, D}), nc = count({B, H, cache.max_seq, D});
    call("attention_forward", {dev_in(q, n), dev_in(k, n), dev_in(v, n), dev_out(o, n), dev_inout(cache.k, nc), dev_inout(cache.v, nc)},
         {{"B", B}, {"H", H}, {"S", S}, {"D", D}, {"pos", pos}, {"max_seq", cache.max_seq}});
}

}  // namespace task6
