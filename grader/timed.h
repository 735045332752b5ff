// timed.h — performance measured by trusted code: `grader --measure-perf N` (run by the grader as
// a child process, like everything that touches the GPU). For each of the task's course shapes it
// sends timed requests — many calls back to back on fresh inputs made from nonces — to the null
// runner (the harness with a submission that does nothing), the submission's runner and the
// reference's, in rounds that start each afresh (one runner alive at a time, the submission's in the
// middle of each round), and times each request with its own clock. A call's
// time is what the request took beyond the null runner's, per call: no runner reports a time, so
// nothing the submission can run or replace sits between the clock and the report. It checks every
// timed call's fingerprint for NaN and repeats, and against the oracle's within a checked call's tolerance
// and precision; flags threads and signal handlers the submission's runner has and the null runner has
// not; and measures the GPU's ceilings itself. Prints one JSON document (perf.cpp reads it).
#pragma once
#include <string>

namespace grader {

// with_baselines: also the course's baselines and Task 4's memory table (not in calibration runs).
// part: a task ("5") or a bonus part ("5b", timed in its task's runner).
int measure_performance(const std::string& part, const std::string& bin_dir, const std::string& ref_bin_dir,
                        bool with_baselines = true);

}  // namespace grader
