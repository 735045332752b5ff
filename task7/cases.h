// cases.h — Task 7's graded cases (shared by test_task7.cpp and the grader). Suites: golden, model.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task7 {
std::vector<attn::GradeCase> grade_cases();
}
