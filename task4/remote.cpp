// remote.cpp — Task 4's interface on the trusted side: the kernel runs in runner_task4 (runner.h).
#include "common/remote/proxy.h"
#include "task4/task4.h"

namespace task4 {

using namespace attn::remote;

void flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk, int D,
                             bool causal) {
    const size_t nq = count({B, H, Sq, D}), nk = count({B, H, Sk, D});
    call("flash_attention_forward", {dev_in(q, nq), dev_in(k, nk), dev_in(v, nk), dev_out(o, nq)},
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}});
}

}  // namespace task4
