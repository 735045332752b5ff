// cases.h — Task 6's graded cases (shared by test_task6.cpp and the grader). Suites: golden,
// oracle, course, errors, fresh.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task6 {
std::vector<attn::GradeCase> grade_cases();
}
