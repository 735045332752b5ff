// remote.cpp — Task 4's interface on the trusted side: the kernel runs in runner_task4 (runner.h).
#include "common/remote/proxy.h"
#include "task4/task4.h"
#include "task4/task4_backward.h"
#include "task4/task4_bf16.h"

namespace task4 {

using namespace attn::remote;

namespace {
// The backward bonus must refuse a null pointer naming it: a null argument travels as a one-float host stand-in,
// its index in "null", and the runner hands the student's function nullptr in its place (task4/serve.cpp).
float null_stand_in = 0.0f;
struct Buffers {
    std::vector<Arg> args;
    nlohmann::json null = nlohmann::json::array();
    void add(const float* p, size_t n, Role role) {
        if (!p) null.push_back(args.size());
        args.push_back(p ? Arg{const_cast<float*>(p), n, role, true} : in(&null_stand_in, 1));
    }
};
}  // namespace

void flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk, int D,
                             bool causal) {
    const size_t nq = count({B, H, Sq, D}), nk = count({B, H, Sk, D});
    call("flash_attention_forward", {dev_in(q, nq), dev_in(k, nk), dev_in(v, nk), dev_out(o, nq)},
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}});
}

// The bf16 bonus: bf16 tensors travel as float words of two bf16 each (an odd count rounds up); the output is
// inout so that the caller's poison (0xFFFF in every element, a bf16 NaN) is what the runner's kernel finds.
void flash_attention_forward_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                  __nv_bfloat16* o, int B, int H, int Sq, int Sk, int D, bool causal) {
    const size_t nq = (count({B, H, Sq, D}) + 1) / 2, nk = (count({B, H, Sk, D}) + 1) / 2;
    auto w = [](const __nv_bfloat16* p) { return reinterpret_cast<float*>(const_cast<__nv_bfloat16*>(p)); };
    call("flash_attention_forward_bf16", {dev_in(w(q), nq), dev_in(w(k), nk), dev_in(w(v), nk), dev_inout(w(o), nq)},
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}});
}

// The backward bonus (task4_backward.h).
void flash_attention_forward_lse(const float* q, const float* k, const float* v, float* o, float* lse, int B, int H, int Sq,
                                 int Sk, int D, bool causal) {
    const size_t nq = count({B, H, Sq, D}), nk = count({B, H, Sk, D}), nl = count({B, H, Sq});
    Buffers b;
    b.add(q, nq, Role::in), b.add(k, nk, Role::in), b.add(v, nk, Role::in), b.add(o, nq, Role::out), b.add(lse, nl, Role::out);
    call("flash_attention_forward_lse", b.args,
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}, {"null", b.null}});
}

void flash_attention_backward(const float* q, const float* k, const float* v, const float* o, const float* dout,
                              const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D,
                              bool causal) {
    const size_t nq = count({B, H, Sq, D}), nk = count({B, H, Sk, D}), nl = count({B, H, Sq});
    Buffers b;
    b.add(q, nq, Role::in), b.add(k, nk, Role::in), b.add(v, nk, Role::in), b.add(o, nq, Role::in), b.add(dout, nq, Role::in);
    b.add(lse, nl, Role::in), b.add(dq, nq, Role::out), b.add(dk, nk, Role::out), b.add(dv, nk, Role::out);
    call("flash_attention_backward", b.args,
         {{"B", B}, {"H", H}, {"Sq", Sq}, {"Sk", Sk}, {"D", D}, {"causal", causal}, {"null", b.null}});
}

}  // namespace task4
