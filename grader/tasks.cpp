// tasks.cpp — the registry of tasks linked into the grader. Add a line when a task lands.
#include "grader/tasks.h"

#include "task1/cases.h"
#include "task2/cases.h"
#include "task3/cases.h"
#include "task4/cases.h"
#include "task4_backward/cases_backward.h"
#include "task4_bf16/cases_bf16.h"
#include "task4_bf16_backward/cases_bf16_backward.h"
#include "task5/cases.h"
#include "task5_paged/cases_paged.h"
#include "task6/cases.h"
#include "task6_serve/cases_serve.h"
#include "task7/cases.h"

namespace grader {

const std::vector<TaskDef>& built_tasks() {
    static const std::vector<TaskDef> tasks = {
        {1, false, task1::grade_cases, ""},
        {2, true, task2::grade_cases, ""},
        {3, false, task3::grade_cases, ""},
        {4, true, task4::grade_cases, ""},
        {5, true, task5::grade_cases, ""},
        {6, true, task6::grade_cases, ""},
        {7, true, task7::grade_cases, ""},
    };
    return tasks;
}

const std::vector<TaskDef>& built_bonus_parts() {
    static const std::vector<TaskDef> parts = {
        {4, true, task4::bf16_grade_cases, "4b"},
        {4, true, task4::backward_grade_cases, "4c"},
        {4, true, task4::bf16_backward_grade_cases, "4d"},
        {5, true, task5::paged_grade_cases, "5b"},
        {6, true, task6::serve_grade_cases, "6b"},
    };
    return parts;
}

}  // namespace grader
