// persistent_bf16.cu — rungs 10, 10b and 10c of the bf16 ladder as the ladder's entry points (the kernel and what each
// adds: persistent_bf16.cuh). Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); CC 9.0 only.
#include "task4_bf16/ladder/ladder_bf16.h"
#include "task4_bf16/ladder/persistent_bf16.cuh"

namespace task4::ladder_bf16 {

namespace {
enum class Consumers { two, two_qreg, three };  // rung 10, 10b, 10c
template <Consumers C>
void run(const char* name, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
         int H, int Sq, int Sk, int D, bool causal) {
    if (!hopper::device_is_sm90a()) throw std::runtime_error(std::string(name) + ": needs an sm_90a build on a compute capability 9.0 GPU");
    if (!hopper::tma_aligned(q, k, v, o)) throw std::invalid_argument(std::string(name) + ": q, k, v and o must be 16-byte aligned");
    constexpr bool qreg = C != Consumers::two;
    if (D == 64 && C == Consumers::three)
        hopper::persistent_launch<64, 128, 2, false, 3>(q, k, v, o, B, H, Sq, Sk, causal);
    else if (D == 64)
        hopper::persistent_launch<64, 128, 3, qreg>(q, k, v, o, B, H, Sq, Sk, causal);
    else  // rung 10c at D = 128 is 10b: three consumers' accumulators do not fit 160 registers
        hopper::persistent_launch<128, 128, 2, qreg>(q, k, v, o, B, H, Sq, Sk, causal);
}
}  // namespace

void persistent_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                        int H, int Sq, int Sk, int D, bool causal) {
    run<Consumers::two>("persistent_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void persistent_qreg_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                             int B, int H, int Sq, int Sk, int D, bool causal) {
    run<Consumers::two_qreg>("persistent_qreg_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void persistent_three_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                              int B, int H, int Sq, int Sk, int D, bool causal) {
    run<Consumers::three>("persistent_three_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}

}  // namespace task4::ladder_bf16
