// tasks.h — the tasks this grader binary was built with.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/cases.h"

namespace grader {

struct TaskDef {
    int id;  // a bonus part: the task it belongs to (it runs in that task's runner)
    bool needs_gpu;
    std::function<std::vector<attn::GradeCase>()> cases;
    std::string bonus;  // a bonus part's key (grader/rubric.json "bonus"), empty for a task
};

// Tasks whose folders exist and were linked in; the rubric's other tasks are "not available".
const std::vector<TaskDef>& built_tasks();
// The bonus parts linked in (Task 4's bf16 forward on tensor cores, "4b"; its backward pass, "4c"; the backward in bf16, "4d").
const std::vector<TaskDef>& built_bonus_parts();

}  // namespace grader
