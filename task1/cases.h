// cases.h — Task 1's graded cases (shared by test_task1.cpp and the grader).
#pragma once
#include <vector>

#include "common/cases.h"

namespace task1 {
std::vector<attn::GradeCase> grade_cases();
}
