// Task 4, bonus part — the Hopper (sm_90a) path of the bf16 forward (interface: task4_bf16/task4_bf16.h).
//
// Build and run: as flash_attention_bf16.cu (make task4-bf16, make bench-task4-bf16); the Makefile compiles this
// file for sm_80 + sm_90a (wgmma and setmaxnreg exist only for the "a" target) with -DATTNLAB_SM90A=1.
#if SOLUTION
// The course's reference: flash_attention_forward_bf16 (flash_attention_bf16.cu) calls hopper_forward first; on a
// compute capability 9.0 GPU (H100, H200) it runs rung 10 of the bf16 ladder with Q's fragments in registers
// (task4_bf16/ladder/persistent_bf16.cuh: wgmma from 128-byte-swizzled shared memory, TMA and mbarrier pipelines, a
// producer warpgroup and two consumer warpgroups with setmaxnreg, ping-pong of the consumers with the next Q·Kᵀ
// issued before the current softmax, persistent blocks fed by a dynamic tile scheduler) — at D = 64, rung 10c (three
// consumer warpgroups on 192-row tiles) where hopper::three_warpgroups_pay says it is faster — and returns true, having
// written each row's log-sum-exp to lse where lse is set; anywhere else (sm_80, a build without sm_90a, pointers not
// 16-byte aligned for TMA) it returns false and the mma.sync kernel of flash_attention_bf16.cu runs. H100, 2026-11-24 (docs/perf.md, "Task 4's bf16 bonus on Hopper"):
// 676.7 TFLOP/s at B=4 H=16 S=4096 D=128 and 621.6 causal through this entry point, against torch's cuDNN backend
// at 638.9 and 552.4 in the same session.
#include <cuda_bf16.h>

#include "task4_bf16/ladder/persistent_bf16.cuh"

namespace task4::bf16_detail {

bool hopper_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B,
                    int H, int Sq, int Sk, int D, bool causal, float* lse) {
    if (!hopper::device_is_sm90a() || !hopper::tma_aligned(q, k, v, o)) return false;
    if (D == 64 && hopper::three_warpgroups_pay(B * H, Sq, Sk, causal))  // rung 10c: by a model of waves
        hopper::persistent_launch<64, 128, 2, false, 3>(q, k, v, o, B, H, Sq, Sk, causal, lse);
    else if (D == 64)
        hopper::persistent_launch<64, 128, 3, true>(q, k, v, o, B, H, Sq, Sk, causal, lse);
    else
        hopper::persistent_launch<128, 128, 2, true>(q, k, v, o, B, H, Sq, Sk, causal, lse);
    return true;
}

}  // namespace task4::bf16_detail
#else
// This file is empty in the student kit: the bonus is flash_attention_bf16.cu. (It is compiled for sm_80 and
// sm_90a, so a Hopper-only path of your own — wgmma, TMA — may live here, called from there.)
#endif
