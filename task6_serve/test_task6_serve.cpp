// test_task6_serve.cpp — Catch2 tests for Task 6's serving part, 6b (needs a GPU; prints "skipped: no CUDA device"
// without).   make task6-serve [SUITE=allocator|serve|fresh|errors]   make task6-serve IMPL=reference
#include "common/case_test.h"
#include "task6_serve/cases_serve.h"

ATTNLAB_CASE_TESTS("task6-serve", task6::serve_grade_cases)
