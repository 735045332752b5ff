// report.h — the grade of one run, and its two renderings from the same data:
// Results.md for people, results.json in Gradescope's schema for the grading system.
#pragma once
#include <string>
#include <vector>

#include "common/cases.h"

namespace grader {

struct CaseRow {
    std::string name;
    double weight = 1;
    attn::CaseResult result;
};

struct TaskReport {
    int id = 0;
    std::string title;
    double points = 0, score = 0;
    std::string status;  // graded | not available | not run
    std::string note;    // why not available / not run
    std::vector<CaseRow> cases;
};

struct GradeReport {
    std::string course, impl, date, host, gpu;
    std::vector<TaskReport> tasks;
};

// Points earned: the task's points times the weighted share of cases passed.
void score_task(TaskReport& t);
double total_score(const GradeReport& g);
double max_score(const GradeReport& g);

void write_results_md(const GradeReport& g, const std::string& path);
void write_results_json(const GradeReport& g, const std::string& path);

}  // namespace grader
