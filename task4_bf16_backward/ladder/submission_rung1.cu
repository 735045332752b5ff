// submission_rung1.cu — part 4d's ladder, rung 1 as a complete submission (the calibration case
// task4d_calibration_rung1, grader/controls.json): the reference with its Hopper file replaced by this one, whose
// hopper_key_tiles_run_here declines every call, so that every shape runs rung 1 — mma.sync, 4 warps × 16 keys, 64-row query
// tiles by cp.async, dQ by float2 atomics (task4_bf16_backward/README.md, "The ladder, measured") — on any GPU.
// Build and time it: as a calibration case, tools/controls/check_controls.py --only task4d_calibration_rung1 (on a GPU;
// tools/gpu/pack_gpu.sh builds it for one).
#include <cuda_bf16.h>

namespace task4::bf16_bwd_detail {

bool hopper_key_tiles_run_here(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*,
                               const __nv_bfloat16*, const __nv_bfloat16*, long long, int) {
    return false;
}

void hopper_key_tiles(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, const float*,
                      const float*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, long long, int, int, int, bool) {}

}  // namespace task4::bf16_bwd_detail
