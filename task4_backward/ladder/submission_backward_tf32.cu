// submission_backward_tf32.cu — Task 4c (task4_backward/task4_backward.h) with the backward on the tensor cores: the ladder's top
// rung (flash_backward_tf32.cuh, 3xTF32) for flash_attention_backward, the reference's FFMA forward for
// flash_attention_forward_lse. Course staff material (not in the student kit): it includes the reference's file, so it
// builds only where the reference does (IMPL=reference, which compiles its solution blocks). The 4c tests, the runner
// or the bridge can be built on it; e.g. the Python bridge (and so make train-attnlab) with this backward:
//   make python IMPL=reference TASK4_BACKWARD_SRC=task4_backward/ladder/submission_backward_tf32.cu
//        TASK4_SRC="task4/reference/flash_attention.cu task4_bf16/reference/flash_attention_bf16.cu"      (one command line)
// The reference's flash_attention_backward is compiled here under another name, flash_attention_backward_ffma: the
// rung calls it on a GPU that cannot run the rung (an A100 at head_dim 128: too little shared memory; older GPUs).
#if !SOLUTION
#error "submission_backward_tf32.cu includes the reference's backward: build it with IMPL=reference"
#endif
#define flash_attention_backward flash_attention_backward_ffma
#include "task4_backward/reference/flash_attention_backward.cu"
#undef flash_attention_backward

#include "task4_backward/ladder/flash_backward_tf32.cuh"

namespace task4 {

void flash_attention_backward(const float* q, const float* k, const float* v, const float* o, const float* dout,
                              const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D,
                              bool causal) {
    task4_ladder::bwd_tf32::backward(q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal, flash_attention_backward_ffma);
}

}  // namespace task4
