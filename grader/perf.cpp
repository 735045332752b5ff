// perf.cpp — see perf.h.
#include "grader/perf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "grader/isolate.h"

#include <unistd.h>

namespace grader {
namespace {

std::string self_path() {
    char buf[4096] = {0};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, size_t(n)) : "grader";
}

// The trusted measurement (timed.h) in a child process: its JSON document is the last line of stdout.
nlohmann::json run_measurement(const std::string& part, const std::string& bin_dir, const std::string& ref_bin_dir, double timeout_s,
                               const std::string& log, bool with_baselines, std::string& failure) {
    const std::string path = self_path();
    std::vector<std::string> argv = {path, "--measure-perf", part, "--bin-dir", bin_dir, "--reference-bin-dir", ref_bin_dir};
    if (!with_baselines) argv.push_back("--no-baselines");
    const ProgramRun run = run_program(argv, timeout_s, log);
    if (!run.failure.empty()) {
        failure = fmt::format("the measurement {}", run.failure);
        return {};
    }
    std::string last = run.out;  // the document is the last line
    while (!last.empty() && last.back() == '\n') last.pop_back();
    const size_t nl = last.rfind('\n');
    if (nl != std::string::npos) last = last.substr(nl + 1);
    try {
        return nlohmann::json::parse(last);
    } catch (const nlohmann::json::exception&) {
        failure = fmt::format("{} printed no readable result", path);
        return {};
    }
}

}  // namespace

double curve(double ratio, const PerfSpec& spec) {
    const auto& c = spec.curve;
    if (c.empty()) return 0.0;
    if (ratio <= c.front().first) return c.front().second;
    for (size_t i = 1; i < c.size(); ++i)
        if (ratio <= c[i].first) {
            const auto [x0, y0] = c[i - 1];
            const auto [x1, y1] = c[i];
            return y0 + (y1 - y0) * (ratio - x0) / (x1 - x0);
        }
    return c.back().second;
}

std::map<std::string, double> stored_reference_times(const std::string& path, const std::string& gpu, const std::string& part,
                                                     std::string& source) {
    std::ifstream in(path);
    if (!in || gpu.empty()) return {};
    try {
        const nlohmann::json j = nlohmann::json::parse(in);
        if (!j.contains("gpus") || !j.at("gpus").contains(gpu)) return {};
        const auto& g = j.at("gpus").at(gpu);
        const std::string key = "task" + part;
        if (!g.contains(key)) return {};
        source = fmt::format("{} ({}, {})", path, g.value("measured", "date unknown"), g.value("how", "how unknown"));
        return g.at(key).get<std::map<std::string, double>>();
    } catch (const nlohmann::json::exception&) {
        return {};
    }
}

PerfResult run_performance(const PerfSpec& spec, const std::string& part, const std::string& bin_dir, const std::string& ref_bin_dir,
                           double timeout_s, const std::string& log_path, const std::string& reference_times,
                           bool with_baselines) {
    PerfResult res;
    std::string failure;
    const nlohmann::json mine = run_measurement(part, bin_dir, ref_bin_dir, timeout_s, log_path, with_baselines, failure);
    if (!failure.empty()) {
        res.note = failure;
        return res;
    }
    res.gpu = mine.value("gpu", "");
    const double sgemm = mine.value("sgemm_tflops", 0.0), copy = mine.value("copy_gbps", 0.0);
    res.copy_gbps = copy, res.sgemm_tflops = sgemm;
    double total = 0;
    std::string source;
    const std::map<std::string, double> stored = stored_reference_times(reference_times, res.gpu, part, source);
    const bool estimating = !mine.value("reference_timed", true) && spec.share > 0;  // share 0: nothing to estimate
    if (estimating)
        res.note = stored.empty()
                       ? fmt::format("the reference's runners are not here, and {} has no times for this GPU ({}): no "
                                     "estimate; speed is credited by the course's grader, which times the reference beside you",
                                     reference_times, res.gpu)
                       : fmt::format("ESTIMATE, not credited: the reference is not here, so each row compares your time with "
                                     "the reference's on this GPU model from {}; the course's grader times the reference "
                                     "beside you in the same run",
                                     source);
    for (const auto& m : mine.at("measurements")) {
        PerfRow row;
        row.name = m.at("name");
        row.ms = m.at("ms");
        row.checked_calls = m.value("checked_calls", 0);
        row.failed_calls = m.value("failed_calls", 0);
        row.flops = m.value("flops", 0.0), row.bytes = m.value("bytes", 0.0);
        row.tflops = row.ms > 0 ? row.flops / (row.ms * 1e9) : 0;
        row.gbps = row.ms > 0 ? row.bytes / (row.ms * 1e6) : 0;
        // for the report only (Task 5's decode is bound by memory, Task 4 by arithmetic)
        row.bandwidth_bound = copy > 0 && sgemm > 0 ? row.bytes / copy > row.flops / (sgemm * 1e3) : row.flops == 0;
        if (m.contains("baselines")) row.baseline_ms = m.at("baselines").get<std::map<std::string, double>>();
        if (m.contains("memory"))
            for (const auto& [key, value] : m.at("memory").items()) {
                if (value.is_number()) row.memory_bytes[key] = value.get<double>();
                else if (key == "submission_error") row.memory_error = value.get<std::string>();
            }
        row.launches = m.value("launches", std::string());
        row.ref_ms = m.value("ref_ms", 0.0);
        row.harness_ms = m.value("harness_ms", 0.0);
        row.calls = m.value("calls", 0) * m.value("batches", 0);
        const double floor_ms = std::max(row.flops / (spec.peak_over_sgemm * sgemm * 1e9), row.bytes / (spec.peak_over_copy * copy * 1e6));
        if (m.contains("too_slow")) {
            // what the call launched is in the report's kernels table (launches_table), beside every shape's
            row.flag = "not timed, too slow at this shape: " + m.at("too_slow").get<std::string>() +
                       " (correct where it finished? the cases say; how many blocks a call launches, and how many SMs they "
                       "fill — the kernels table below — is the first thing to look at)";
            row.ref_ms = 0;
        } else if (m.contains("timing_flag")) {
            row.flag = m.at("timing_flag").get<std::string>() + "; flagged for review, not credited";
        } else if (row.failed_calls > 0) {
            row.flag = fmt::format("{} of {} timed calls gave a wrong output: {}", row.failed_calls, row.checked_calls,
                                   m.value("reason", ""));
        } else if (row.checked_calls == 0) {
            row.flag = "no timed call was checked";
        } else if (row.ms < floor_ms) {
            row.flag = fmt::format("implausible: {:.3f} ms is under the roofline floor of {:.3f} ms for its FLOPs and "
                                   "bytes; flagged for review, not credited",
                                   row.ms, floor_ms);
        } else if (spec.share == 0) {  // shown, not credited
        } else if (estimating) {
            const auto it = stored.find(row.name);
            if (it != stored.end()) {
                row.ref_ms = it->second;
                row.estimate = curve(row.ms / row.ref_ms, spec);
                row.flag = fmt::format("estimate: {:.0f}% of the speed credit (not credited here)", 100 * row.estimate);
            } else {
                row.flag = "not credited here (no reference time for this shape)";
            }
        } else if (row.ref_ms <= 0) {
            row.flag = "the reference did not measure this shape";
        } else {
            row.credit = curve(row.ms / row.ref_ms, spec);
        }
        total += row.credit;
        res.rows.push_back(row);
    }
    res.credit = res.rows.empty() ? 0 : total / double(res.rows.size());
    if (estimating && !stored.empty()) {
        double est = 0;
        for (const auto& r : res.rows) est += std::max(r.estimate, 0.0);
        res.note += fmt::format(". Estimated speed credit: {:.0f}% (mean over the {} shapes)", 100 * est / double(res.rows.size()),
                                res.rows.size());
    }
    if (res.rows.empty()) res.note = "the benchmark measured nothing";
    return res;
}

}  // namespace grader
