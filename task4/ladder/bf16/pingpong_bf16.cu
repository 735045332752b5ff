// pingpong_bf16.cu — rung 9 of the bf16 ladder as the ladder's entry points (the kernel and what it adds:
// pingpong_bf16.cuh). Variants: without the intra-warpgroup overlap (ping-pong alone), and key tiles of 176.
// Build and run: make ladder-task4-bf16 (sm_80 + sm_90a, -DATTNLAB_SM90A=1); compute capability 9.0 only.
#include "task4/ladder/bf16/ladder_bf16.h"
#include "task4/ladder/bf16/pingpong_bf16.cuh"

namespace task4::ladder_bf16 {
namespace {
template <int BC, bool OVERLAP>
void run(const char* name, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
         int H, int Sq, int Sk, int D, bool causal) {
    if (!hopper::device_is_sm90a()) throw std::runtime_error(std::string(name) + ": needs an sm_90a build on a compute capability 9.0 GPU");
    if (!hopper::tma_aligned(q, k, v, o)) throw std::invalid_argument(std::string(name) + ": q, k, v and o must be 16-byte aligned");
    if (D == 64)
        hopper::pingpong_launch<64, BC, 3, OVERLAP>(q, k, v, o, B, H, Sq, Sk, causal);
    else
        hopper::pingpong_launch<128, BC, 2, OVERLAP>(q, k, v, o, B, H, Sq, Sk, causal);
}
}  // namespace

void pingpong_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                      int H, int Sq, int Sk, int D, bool causal) {
    run<128, true>("pingpong_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void pingpong_no_overlap_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                                 int B, int H, int Sq, int Sk, int D, bool causal) {
    run<128, false>("pingpong_no_overlap_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
void pingpong_bc176_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                            int B, int H, int Sq, int Sk, int D, bool causal) {
    run<176, true>("pingpong_bc176_forward", q, k, v, o, B, H, Sq, Sk, D, causal);
}
bool hopper_rungs_available() { return hopper::device_is_sm90a(); }

}  // namespace task4::ladder_bf16
