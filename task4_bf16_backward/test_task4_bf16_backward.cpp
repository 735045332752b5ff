// test_task4_bf16_backward.cpp — Catch2 tests for Task 4's bf16 backward bonus, 4d (needs a GPU; prints "skipped: no
// CUDA device" without).   make task4-bf16-backward [SUITE=golden|fresh|long|memory|errors]   make task4-bf16-backward IMPL=reference
#include "common/case_test.h"
#include "task4_bf16_backward/cases_bf16_backward.h"

ATTNLAB_CASE_TESTS("task4-bf16-backward", task4::bf16_backward_grade_cases)
