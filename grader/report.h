// report.h — the grade of one run, and its two renderings from the same data:
// Results.md for people, results.json in Gradescope's schema for the grading system.
#pragma once
#include <string>
#include <vector>

#include "common/cases.h"
#include "grader/perf.h"

namespace grader {

struct CaseRow {
    std::string name;
    double weight = 1;
    attn::CaseResult result;
};

struct TaskReport {
    int id = 0;
    std::string bonus;                 // a bonus part's key ("4b"): shown and scored apart from the tasks
    std::string title;
    double points = 0, score = 0;
    std::string status;                // graded | not available | not run
    std::string note;                  // why not available / not run
    std::vector<std::string> flags;    // integrity problems (forbidden library, …): the task scores 0
    std::vector<CaseRow> cases;
    double perf_share = 0;             // of the points, from the rubric
    bool perf_timed = false;           // the rubric times this task (share 0: shown, not credited)
    PerfResult perf;                   // empty rows: not measured (perf.note says why)
};

struct GradeReport {
    std::string course, impl, date, host, gpu, seed;
    std::string sandbox;  // how the submission's code ran (common/remote/sandbox.h)
    std::vector<std::string> edited_files;  // protected files the submission changed
    bool edited_scores_zero = true;
    std::vector<TaskReport> tasks;
    std::vector<TaskReport> bonus;  // optional parts: their points are not in total_score
    std::string graded_on;          // which GPU of a host of several graded the run (grader --graded-on), or ""
};

bool all_cases_passed(const TaskReport& t);
// Points earned: correctness (the weighted share of cases passed) plus performance credit, zero
// with an integrity flag.
void score_task(TaskReport& t);
double total_score(const GradeReport& g);
double max_score(const GradeReport& g);
double bonus_score(const GradeReport& g);  // the bonus parts' points (0 with an edited harness)

void write_results_md(const GradeReport& g, const std::string& path);
void write_results_json(const GradeReport& g, const std::string& path);

}  // namespace grader
