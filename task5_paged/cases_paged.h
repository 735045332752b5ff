// cases_paged.h — the graded cases of Task 5's paged part, 5b (test_task5_paged.cpp and the grader). Suites: layout,
// gqa, long, fresh, errors.
#pragma once
#include <vector>

#include "common/cases.h"

namespace task5 {
std::vector<attn::GradeCase> paged_grade_cases();
}
