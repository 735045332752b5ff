// cases.h — Task 2's graded cases (shared by test_task2.cpp and the grader). Suites: softmax,
// gemm, attention (GradeCase::suite; `make task2 SUITE=gemm`).
#pragma once
#include <vector>

#include "common/cases.h"

namespace task2 {
std::vector<attn::GradeCase> grade_cases();
}
