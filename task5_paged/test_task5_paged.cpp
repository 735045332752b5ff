// test_task5_paged.cpp — Catch2 tests for Task 5's paged part, 5b (needs a GPU; prints "skipped: no CUDA device"
// without).   make task5-paged [SUITE=layout|gqa|long|fresh|f32|errors]   make task5-paged IMPL=reference
#include "common/case_test.h"
#include "task5_paged/cases_paged.h"

ATTNLAB_CASE_TESTS("task5-paged", task5::paged_grade_cases)
