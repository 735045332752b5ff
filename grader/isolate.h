// isolate.h — run a task's cases in child processes, so a crash or hang costs one case only.
//
// The child runs cases in order and reports each over a pipe the grader owns ("S i" before
// case i, "R i {json}" after it; for GPU tasks first "D <gpu>" or "N <why not>"). If the child
// dies (signal, exit, time limit), the case it was in is recorded with the reason and a fresh
// child continues with the next case; after a CUDA error that poisons the context the child ends
// itself and a fresh one takes over. The GPU context lives and dies with the child; the grader
// itself never touches the GPU.
#pragma once
#include <string>
#include <vector>

#include "common/cases.h"
#include "grader/tasks.h"

namespace grader {

struct IsolationLimits {
    double case_timeout_s = 120;
    long memory_limit_mb = 0;  // address-space cap for CPU tasks; 0 = none
    std::string log_path;      // the child's stdout/stderr are appended here
};

struct TaskRun {
    std::vector<attn::CaseResult> results;  // one per case, in order
    std::string not_run;                    // non-empty: the task could not run here (e.g. no CUDA device)
    std::string device;                     // the GPU the child saw, for GPU tasks
};

TaskRun run_isolated(const TaskDef& task, const IsolationLimits& limits);

// Runs a program (a benchmark group) in its own process group with a time limit; its stdout is
// returned, its stderr appended to `log_path`. `failure` says why it did not finish cleanly.
struct ProgramRun {
    std::string out, failure;
};
ProgramRun run_program(const std::vector<std::string>& argv, double timeout_s, const std::string& log_path);

}  // namespace grader
