// cases_serve.h — the graded cases of Task 6's serving part, 6b (test_task6_serve.cpp and the grader). Suites:
// allocator, serve, fresh, errors.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task6 {
std::vector<attn::GradeCase> serve_grade_cases();
}
