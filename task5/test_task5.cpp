// test_task5.cpp — Catch2 tests for Task 5 (needs a GPU; prints "skipped: no CUDA device" without).
//   make task5 [SUITE=golden|course|long|errors|fresh]      make task5 IMPL=reference
#include "common/case_test.h"
#include "task5/cases.h"

ATTNLAB_CASE_TESTS("task5", task5::grade_cases)
