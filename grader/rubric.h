// rubric.h — scoring as data: points per task, time limits (grader/rubric.json).
#pragma once
#include <string>
#include <vector>

namespace grader {

struct RubricTask {
    int id = 0;
    std::string title;
    double points = 0;
};

struct Rubric {
    std::string course;
    double case_timeout_s = 120;
    long memory_limit_mb = 0;  // per child process (CPU tasks); 0 = no cap
    std::vector<RubricTask> tasks;
};

// Throws std::runtime_error naming the file and the problem.
Rubric load_rubric(const std::string& path);

}  // namespace grader
