// null_submission.cpp — the backward bonus done by nothing: part of runner_task4's null runner
// (task4/null_submission.cpp).
#include "task4_backward/task4_backward.h"

namespace task4 {
void flash_attention_forward_lse(const float*, const float*, const float*, float*, float*, int, int, int, int, int, bool) {}
void flash_attention_backward(const float*, const float*, const float*, const float*, const float*, const float*, float*, float*,
                              float*, int, int, int, int, int, bool) {}
}  // namespace task4
