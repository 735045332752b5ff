// test_task3.cpp — Catch2 tests for Task 3, linked against the skeleton or the reference.
//   make task3                  (your skeleton)     make task3 IMPL=reference
#include "common/case_test.h"
#include "task3/cases.h"

ATTNLAB_CASE_TESTS("task3", task3::grade_cases)
