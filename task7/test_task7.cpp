// test_task7.cpp — Catch2 tests for Task 7 (needs a GPU; prints "skipped: no CUDA device" without).
//   make task7 [SUITE=golden|model]      make task7 IMPL=reference      make task7 PROMPT="…" TOKENS=50
#include "common/case_test.h"
#include "task7/cases.h"

ATTNLAB_CASE_TESTS("task7", task7::grade_cases)
