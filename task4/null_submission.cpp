// null_submission.cpp — Task 4's interfaces done by nothing: the null runner's (the harness alone).
// The grader measures it beside a submission: the harness's own time in a timed request, the
// device and host memory of the fused case and of the memory table, threads, signal handlers
// (grader/timed.cpp, task4/cases.cpp; docs/grader.md).
#include "task4/task4.h"
#include "task4/task4_backward.h"
#include "task4/task4_bf16.h"

namespace task4 {
void flash_attention_forward(const float*, const float*, const float*, float*, int, int, int, int, int, bool) {}
void flash_attention_forward_bf16(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int,
                                  int, int, int, bool) {}
void flash_attention_forward_lse(const float*, const float*, const float*, float*, float*, int, int, int, int, int, bool) {}
void flash_attention_backward(const float*, const float*, const float*, const float*, const float*, const float*, float*, float*,
                              float*, int, int, int, int, int, bool) {}
}  // namespace task4
