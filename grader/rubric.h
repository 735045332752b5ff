// rubric.h — scoring as data (grader/rubric.json): points per task, the share of them that is
// performance credit and its curve, libraries a task forbids, time limits. An instructor changes
// the curve or the points here, not in code.
#pragma once
#include <string>
#include <vector>

#include "grader/perf.h"

namespace grader {

struct RubricTask {
    int id = 0;                              // a bonus part: the task it belongs to (its runner, its objects)
    std::string bonus;                       // a bonus part's key ("4b"); empty for the seven tasks
    std::string title;
    double points = 0;
    PerfSpec perf;                           // perf.share == 0: correctness only
    std::vector<std::string> harness;        // prefixes of harness names the student's objects may use (symbols.h)
    // names the student's objects must call (prefixes of demangled names): a part built on the student's other
    // kernels (6b on 4b and 5b) is graded on them, not on work done some other way.
    std::vector<std::string> requires_calls;
    std::vector<std::string> requires_calls_suites;  // the suites whose passing cases need those calls (empty: every suite)
};

struct Rubric {
    std::string course;
    double case_timeout_s = 120;
    double bench_timeout_s = 900;
    long memory_limit_mb = 0;                // per child process (CPU tasks); 0 = no cap
    bool edited_harness_scores_zero = true;  // a submission that edited protected files gets 0
    std::vector<RubricTask> tasks;
    std::vector<RubricTask> bonus;           // optional parts, scored apart from the tasks' total
};

// Throws std::runtime_error naming the file and the problem.
Rubric load_rubric(const std::string& path);

}  // namespace grader
