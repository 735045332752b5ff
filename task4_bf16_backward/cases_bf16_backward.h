// cases_bf16_backward.h — the graded cases of Task 4's bf16 backward bonus, 4d (test_task4_bf16_backward.cpp and the
// grader). Suites: golden, fresh, long, memory, errors.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task4 {
std::vector<attn::GradeCase> bf16_backward_grade_cases();
}
