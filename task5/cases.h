// cases.h — Task 5's graded cases (shared by test_task5.cpp and the grader). Suites: golden,
// course, long, errors, fresh.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task5 {
std::vector<attn::GradeCase> grade_cases();
}
