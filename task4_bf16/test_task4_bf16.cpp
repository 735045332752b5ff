// test_task4_bf16.cpp — Catch2 tests for Task 4's bf16 bonus (needs a GPU; prints "skipped: no CUDA device" without).
//   make task4-bf16 [SUITE=golden|fresh|long|errors]      make task4-bf16 IMPL=reference
#include "common/case_test.h"
#include "task4_bf16/cases_bf16.h"

ATTNLAB_CASE_TESTS("task4-bf16", task4::bf16_grade_cases)
