// remote.cpp — Task 3's interface on the trusted side: the call runs in runner_task3 (runner.h).
#include "common/remote/proxy.h"
#include "task3/task3.h"

namespace task3 {

using namespace attn::remote;

void flash_attention_cpu(const float* Q, const float* K, const float* V, float* O, int B, int H, int S, int D, int Br,
                         int Bc, bool causal) {
    const size_t n = count({B, H, S, D});
    call("flash_attention_cpu", {in(Q, n), in(K, n), in(V, n), out(O, n)},
         {{"B", B}, {"H", H}, {"S", S}, {"D", D}, {"Br", Br}, {"Bc", Bc}, {"causal", causal}});
}

}  // namespace task3
