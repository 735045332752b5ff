// perf.h — performance credit: the task's timed shapes, measured by the grader for the submission and the
// reference on the same GPU in the same grading run, turned into credit by the rubric's curve.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace grader {

struct PerfSpec {
    double share = 0;          // of the task's points; 0 = no performance credit
    double full_at = 1.2;      // full credit at ≤ this × the reference's time
    double zero_at = 10.0;     // no credit at ≥ this ×, linear in between
    double peak_over_sgemm = 1.4;  // plausibility: the FLOP floor uses this × the measured SGEMM rate
    double peak_over_copy = 1.05;  // … and the byte floor this × the measured copy bandwidth
};

struct PerfRow {
    std::string name;
    double ms = 0, ref_ms = 0, tflops = 0, credit = 0;
    double gbps = 0;               // bytes the shape must move / time
    bool bandwidth_bound = false;  // its byte floor (bytes / copy bandwidth) exceeds its FLOP floor: report GB/s
    int checked_calls = 0, failed_calls = 0;
    std::map<std::string, double> baseline_ms;  // other pipelines timed in the same process
    std::string flag;                           // why no credit (wrong output, implausibly fast, …)
};

struct PerfResult {
    std::vector<PerfRow> rows;
    std::string note;  // set when nothing could be measured, and why
    std::string gpu;
    double copy_gbps = 0, sgemm_tflops = 0;  // the ceilings the grader measured in its run
    double credit = 0;  // mean over rows, 0..1
};

// Linear credit in the ratio (submission time / reference time).
double curve(double ratio, const PerfSpec& spec);

// Runs the trusted measurement (grader --measure-perf, timed.h) of `task`: the submission's runners
// in bin_dir against the reference's in ref_bin_dir, same GPU, same run.
PerfResult run_performance(const PerfSpec& spec, int task, const std::string& bin_dir, const std::string& ref_bin_dir,
                           double timeout_s, const std::string& log_path);

}  // namespace grader
