// tasks.h — the tasks this grader binary was built with.
#pragma once
#include <functional>
#include <vector>

#include "common/cases.h"

namespace grader {

struct TaskDef {
    int id;
    bool needs_gpu;
    std::function<std::vector<attn::GradeCase>()> cases;
};

// Tasks whose folders exist and were linked in; the rubric's other tasks are "not available".
const std::vector<TaskDef>& built_tasks();

}  // namespace grader
