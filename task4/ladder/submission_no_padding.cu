// submission_no_padding.cu — Task 4's ladder step "no_padding" (flash_ladder.cuh: Rung NoPad) as a submission: the
// calibration cases of the speed-credit curve build a runner from it (grader/controls.json).
#include "task4/ladder/flash_ladder.cuh"
#include "task4/task4.h"

void task4::flash_attention_forward(const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                                    int D, bool causal) {
    task4_ladder::forward_tiled<task4_ladder::NoPad>(q, k, v, o, B, H, Sq, Sk, D, causal);
}
