// cases.h — Task 3's graded cases (shared by test_task3.cpp and the grader).
#pragma once
#include <vector>

#include "common/cases.h"

namespace task3 {
std::vector<attn::GradeCase> grade_cases();
}
