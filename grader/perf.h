// perf.h — performance credit: the task's timed shapes, measured by the grader for the submission and the
// reference on the same GPU in the same grading run, turned into credit by the rubric's curve.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace grader {

struct PerfSpec {
    bool timed = false;        // the rubric gives the task a "performance" entry: its shapes are timed and shown
    double share = 0;          // of the task's points; 0 = shown, not credited (Task 2: its roofline)
    // The credit curve: (ratio to the reference's time, credit) points, ratio increasing, credit
    // not increasing; credit is the first point's at or below its ratio, the last point's at or
    // above its ratio, and linear in between (grader/rubric.json, set from the measured ladder).
    std::vector<std::pair<double, double>> curve = {{1.2, 1.0}, {10.0, 0.0}};
    double peak_over_sgemm = 1.4;  // plausibility: the FLOP floor uses this × the measured SGEMM rate
    // … and the byte floor this × the measured copy bandwidth. A kernel that only reads streams faster than a copy,
    // which reads and writes: Task 5's reference read 1.03–1.07× the copy rate on an H200 (2026-11-25), so a floor at
    // 1.05× flagged the reference itself in about half its runs. HBM's rated peak is 1.14× (H100) and 1.15× (H200) the
    // measured copy rate; 1.25× is above both, and a kernel that skips a fifth of the bytes still lands under it.
    double peak_over_copy = 1.25;
};

struct PerfRow {
    std::string name;
    // ms, ref_ms: per call, what a runner's timed requests took beyond the null runner's (timed.h)
    double ms = 0, ref_ms = 0, tflops = 0, credit = 0;
    double harness_ms = 0;  // per call, the null runner's own request time (inputs, L2 flush, fingerprint)
    int calls = 0;          // timed calls of the submission at this shape
    double flops = 0, bytes = 0;  // the shape's work: FLOPs, and bytes read and written once
    double gbps = 0;               // bytes the shape must move / time
    bool bandwidth_bound = false;  // its byte floor (bytes / copy bandwidth) exceeds its FLOP floor: report GB/s
    int checked_calls = 0, failed_calls = 0;
    std::map<std::string, double> baseline_ms;  // other pipelines timed in the same process
    // Task 4: device memory of one timed request, watched by the grader (timed.cpp): io_bytes (Q, K, V, O),
    // flush_bytes (the timing's L2 flush), scores_bytes (the S×S scores, all heads), scores_slice_bytes,
    // pipeline_peak_bytes (cuBLAS + softmax, in slices), submission_peak_bytes and null_peak_bytes (a fresh
    // runner of the submission's / the harness alone, from before it starts). Empty elsewhere.
    std::map<std::string, double> memory_bytes;
    std::string memory_error;  // why the submission's memory was not measured
    std::string flag;                           // why no credit (wrong output, implausibly fast, …)
    std::string launches;  // the kernels one untimed call launched, as its runner recorded them (launch_log.h; not graded)
    double estimate = -1;                       // >= 0: estimated credit against stored reference times (not credited)
};

struct PerfResult {
    std::vector<PerfRow> rows;
    std::string note;  // set when nothing could be measured, and why
    std::string gpu;
    double copy_gbps = 0, sgemm_tflops = 0;  // the ceilings the grader measured in its run
    double credit = 0;  // mean over rows, 0..1
};

// Credit for a ratio (submission time / reference time) on the spec's curve.
double curve(double ratio, const PerfSpec& spec);

// The reference's times measured on other runs, per GPU model (grader/reference_times.json): a
// grader without the reference's runners (the student kit) estimates speed credit from them.
// Returns the shape → ms map for `gpu`, and in `source` where it came from; empty if none.
std::map<std::string, double> stored_reference_times(const std::string& path, const std::string& gpu, const std::string& part,
                                                     std::string& source);

// Runs the trusted measurement (grader --measure-perf, timed.h) of `task`: the submission's runners
// in bin_dir against the reference's in ref_bin_dir, same GPU, same run. Without the reference's
// runner for the task (the student kit) the submission alone is timed and, where
// `reference_times` has this GPU, each row gets an estimate (never credit).
PerfResult run_performance(const PerfSpec& spec, const std::string& part, const std::string& bin_dir, const std::string& ref_bin_dir,
                           double timeout_s, const std::string& log_path, const std::string& reference_times = "",
                           bool with_baselines = true);

}  // namespace grader
