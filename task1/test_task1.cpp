// test_task1.cpp — Catch2 tests for Task 1, linked against the skeleton or the reference.
//   make task1                  (your skeleton)     make task1 IMPL=reference
#include "common/case_test.h"
#include "task1/cases.h"

ATTNLAB_CASE_TESTS("task1", task1::grade_cases)
