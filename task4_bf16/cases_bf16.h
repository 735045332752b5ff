// cases_bf16.h — the graded cases of Task 4's bf16 bonus (test_task4_bf16.cpp and the grader). Suites: golden,
// fresh, long, errors.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task4 {
std::vector<attn::GradeCase> bf16_grade_cases();
}
