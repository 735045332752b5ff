// remote.cpp — the bf16 backward bonus's interface on the trusted side: the kernels run in runner_task4 (runner.h).
// bf16 tensors travel as float words of two bf16 each (an odd count rounds up); the gradients are inout so that the
// caller's poison (0xFFFF, a bf16 NaN, in every element) is what the runner's kernel finds; a null pointer reaches
// the student's function as null (proxy.h, NullableArgs).
#include "common/remote/proxy.h"
#include "task4_bf16_backward/task4_bf16_backward.h"

namespace task4 {

using namespace attn::remote;

void flash_attention_backward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* o, const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq,
                                   __nv_bfloat16* dk, __nv_bfloat16* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
    const size_t nq = (count({B, H, Sq, D}) + 1) / 2, nk = (count({B, H, Sk, D}) + 1) / 2, nl = count({B, H, Sq});
    NullableArgs b;
    b.add(q, nq, Role::in), b.add(k, nk, Role::in), b.add(v, nk, Role::in), b.add(o, nq, Role::in), b.add(dout, nq, Role::in);
    b.add(lse, nl, Role::in), b.add(dq, nq, Role::inout), b.add(dk, nk, Role::inout), b.add(dv, nk, Role::inout);
    call("flash_attention_backward_bf16", b.args,
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}, {"null", b.null}});
}

void flash_attention_forward_bf16_lse(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                      __nv_bfloat16* o, float* lse, int B, int H, int Sq, int Sk, int D, bool causal) {
    const size_t nq = (count({B, H, Sq, D}) + 1) / 2, nk = (count({B, H, Sk, D}) + 1) / 2, nl = count({B, H, Sq});
    NullableArgs b;
    b.add(q, nq, Role::in), b.add(k, nk, Role::in), b.add(v, nk, Role::in), b.add(o, nq, Role::inout), b.add(lse, nl, Role::inout);
    call("flash_attention_forward_bf16_lse", b.args,
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}, {"null", b.null}});
}

}  // namespace task4
