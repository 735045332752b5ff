// cases_backward.h — the graded cases of Task 4's backward bonus, 4c (test_task4_backward.cpp and the grader).
// Suites: golden, fresh, long, memory, errors.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task4 {
std::vector<attn::GradeCase> backward_grade_cases();
}
