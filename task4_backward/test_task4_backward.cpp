// test_task4_backward.cpp — Catch2 tests for Task 4's backward bonus, 4c (needs a GPU; prints "skipped: no CUDA device"
// without).   make task4-backward [SUITE=golden|fresh|long|memory|errors]      make task4-backward IMPL=reference
#include "common/case_test.h"
#include "task4_backward/cases_backward.h"

ATTNLAB_CASE_TESTS("task4-backward", task4::backward_grade_cases)
