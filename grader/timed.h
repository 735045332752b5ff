// timed.h — performance measured by trusted code: `grader --measure-perf N` (run by the grader as
// a child process, like everything that touches the GPU). For each of the task's course shapes it
// asks the submission's runner and then the reference's for timed calls on fresh inputs made
// from nonces; brackets each request with its own clock; flags reported times that do not agree
// with that clock; checks the fingerprints of two timed calls it picks afterwards against the
// oracle; and measures the GPU's ceilings itself. Prints one JSON document (perf.cpp reads it).
#pragma once
#include <string>

namespace grader {

int measure_performance(int task, const std::string& bin_dir, const std::string& ref_bin_dir);

}  // namespace grader
