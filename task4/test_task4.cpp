// test_task4.cpp — Catch2 tests for Task 4 (needs a GPU; prints "skipped: no CUDA device" without).
//   make task4 [SUITE=golden|course_large|errors]      make task4 IMPL=reference
#include "common/case_test.h"
#include "task4/cases.h"

ATTNLAB_CASE_TESTS("task4", task4::grade_cases)
