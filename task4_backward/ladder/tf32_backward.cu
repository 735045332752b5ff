// tf32_backward.cu — the backward ladder's top rung, 3xTF32 on the tensor cores (flash_backward_tf32.cuh, whose header
// says what and why), with the ladder's signature: for the list of rungs (ladder_backward.h) and the rung's own
// benchmark (bench_backward_tf32.cpp). Where this GPU cannot run it, the FFMA reference (task4::flash_attention_backward)
// does the work.
//   make ladder-task4-backward-tf32 [ARGS="--quick"]      (course repository, a GPU)
#include "task4_backward/ladder/flash_backward_tf32.cuh"
#include "task4_backward/ladder/ladder_backward.h"
#include "task4_backward/task4_backward.h"

namespace task4::ladder_backward {

void tf32_backward(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse,
                   float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
    task4_ladder::bwd_tf32::backward(q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal, task4::flash_attention_backward);
}

void tf32_backward_s_dp_whole(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse,
                              float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal) {
    task4_ladder::bwd_tf32::backward<false>(q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal,
                                            task4::flash_attention_backward);
}

bool tf32_backward_runs_here(int D) { return task4_ladder::bwd_tf32::runs_here(D); }

}  // namespace task4::ladder_backward
