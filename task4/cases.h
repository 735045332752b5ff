// cases.h — Task 4's graded cases (shared by test_task4.cpp and the grader). Suites: golden,
// course_large, errors.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task4 {
std::vector<attn::GradeCase> grade_cases();
}
