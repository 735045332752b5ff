// test_task6.cpp — Catch2 tests for Task 6 (needs a GPU; prints "skipped: no CUDA device" without).
//   make task6 [SUITE=golden|oracle|course|errors|fresh]      make task6 IMPL=reference
#include "common/case_test.h"
#include "task6/cases.h"

ATTNLAB_CASE_TESTS("task6", task6::grade_cases)
