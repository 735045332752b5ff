// remote.cpp — the backward bonus's interface on the trusted side: the kernels run in runner_task4 (runner.h).
#include "common/remote/proxy.h"
#include "task4_backward/task4_backward.h"

namespace task4 {

using namespace attn::remote;

void flash_attention_forward_lse(const float* q, const float* k, const float* v, float* o, float* lse, int B, int H, int Sq,
                                 int Sk, int D, bool causal) {
    const size_t nq = count({B, H, Sq, D}), nk = count({B, H, Sk, D}), nl = count({B, H, Sq});
    NullableArgs b;
    b.add(q, nq, Role::in), b.add(k, nk, Role::in), b.add(v, nk, Role::in), b.add(o, nq, Role::out), b.add(lse, nl, Role::out);
    call("flash_attention_forward_lse", b.args,
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}, {"null", b.null}});
}

void flash_attention_backward(const float* q, const float* k, const float* v, const float* o, const float* dout,
                              const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D,
                              bool causal) {
    const size_t nq = count({B, H, Sq, D}), nk = count({B, H, Sk, D}), nl = count({B, H, Sq});
    NullableArgs b;
    b.add(q, nq, Role::in), b.add(k, nk, Role::in), b.add(v, nk, Role::in), b.add(o, nq, Role::in), b.add(dout, nq, Role::in);
    b.add(lse, nl, Role::in), b.add(dq, nq, Role::out), b.add(dk, nk, Role::out), b.add(dv, nk, Role::out);
    call("flash_attention_backward", b.args,
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}, {"null", b.null}});
}

}  // namespace task4
