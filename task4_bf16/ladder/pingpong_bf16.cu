// pingpong_bf16.cu — rung 9 of the bf16 ladder as the ladder's entry points (the kernel and what it adds:
// pingpong_bf16.cuh). Variants: without the intra-warpgroup overlap (ping-pong alone), key tiles of 176, one more K/V
// stage, and Q's fragments in registers (+ one more stage).
// Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); compute capability 9.0 only.
#include "task4_bf16/ladder/ladder_bf16.h"
#include "task4_bf16/ladder/pingpong_bf16.cuh"

namespace task4::ladder_bf16 {
namespace {
// STAGES64 / STAGES128: the K/V stages at head_dim 64 / 128
template <int BC, bool OVERLAP, int STAGES64, int STAGES128, bool QREG = false>
void run(const char* name, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
         int H, int Sq, int Sk, int D, bool causal) {
    if (!hopper::device_is_sm90a()) throw std::runtime_error(std::string(name) + ": needs an sm_90a build on a compute capability 9.0 GPU");
    if (!hopper::tma_aligned(q, k, v, o)) throw std::invalid_argument(std::string(name) + ": q, k, v and o must be 16-byte aligned");
    if (D == 64)
        hopper::pingpong_launch<64, BC, STAGES64, OVERLAP, QREG>(q, k, v, o, B, H, Sq, Sk, causal);
    else
        hopper::pingpong_launch<128, BC, STAGES128, OVERLAP, QREG>(q, k, v, o, B, H, Sq, Sk, causal);
}
}  // namespace

void pingpong_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                      int H, int Sq, int Sk, int D, bool causal) {
    run<128, true, 3, 2>("pingpong_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void pingpong_no_overlap_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                                 int B, int H, int Sq, int Sk, int D, bool causal) {
    run<128, false, 3, 2>("pingpong_no_overlap_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void pingpong_bc176_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                            int B, int H, int Sq, int Sk, int D, bool causal) {
    run<176, true, 3, 2>("pingpong_bc176_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void pingpong_stages_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                             int B, int H, int Sq, int Sk, int D, bool causal) {
    run<128, true, 4, 3>("pingpong_stages_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void pingpong_qreg_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                           int H, int Sq, int Sk, int D, bool causal) {
    run<128, true, 4, 3, true>("pingpong_qreg_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
bool hopper_rungs_available() { return hopper::device_is_sm90a(); }

}  // namespace task4::ladder_bf16
