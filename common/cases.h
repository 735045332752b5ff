// cases.h — a graded case: the unit that tests, the grader and reports share.
//
// Each task lists its cases once (taskN/cases_taskN.cpp). The Catch2 test of the task runs every
// case and requires it to pass; the grader runs the same cases in a child process and scores them.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn {

struct CaseResult {
    std::string status = "failed";  // passed | failed | error | skipped
    std::string reason;             // one line; empty when passed
    std::string detail;             // optional lines (first mismatches, …)
    std::string shape;              // what ran, e.g. "B=4 S=10 hidden=128 heads=8 causal"
    double max_abs_err = -1;        // < 0: not measured
    double tol_share = -1;
    bool nonfinite_output = false;  // NaN/Inf in a checked output: max_abs_err (over the finite ones) says nothing
    double ms = -1;                 // wall time of the call under test (informational, not a benchmark)
    std::map<std::string, double> metrics;  // e.g. peak_scratch_bytes
    std::string output;             // text for the report (Task 7's generations)
    std::string note;               // one more fact on the case's line, passed or not (the memory a call took)
};

struct GradeCase {
    std::string name;
    double weight = 1.0;
    std::function<CaseResult()> run;
    std::string suite;  // optional group, selectable with `make taskN SUITE=…` (ATTNLAB_SUITE)
};

// Runs a case and turns every exception into a result: "task1.3 not implemented", a golden-file
// problem, or any other error, each named. Only crashes and hangs escape (the grader's child
// process catches those).
CaseResult run_case(const GradeCase& c);

// The one-line summary a test run and the grader print per case (plus the reason when failed).
std::string case_line(const std::string& name, const CaseResult& r);

}  // namespace attn
