// test_task2.cpp — Catch2 tests for Task 2 (needs a GPU; prints "skipped: no CUDA device" without).
//   make task2 [SUITE=softmax|gemm|attention]      make task2 IMPL=reference
#include "common/case_test.h"
#include "task2/cases.h"

ATTNLAB_CASE_TESTS("task2", task2::grade_cases)
