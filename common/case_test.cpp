// case_test.cpp — the per-case lines and the summary a test run prints (see case_test.h).
#include "common/case_test.h"

#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

namespace attn {
namespace {

// While a case runs: a line after its first 5 s and every 10 s after ("  [running] large S=4096 … 15 s"), so that a
// long case (Task 3's S = 4096 takes half a minute on 2 cores) shows it is working, not stuck. Written with write(2),
// not stdio: a case forks its child while this thread may be printing, and a stdio lock held across fork stays held.
class Progress {
public:
    explicit Progress(std::string name) : name_(std::move(name)), thread_([this] { watch(); }) {}
    ~Progress() {
        {
            std::lock_guard<std::mutex> lock(m_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

private:
    void watch() {
        std::unique_lock<std::mutex> lock(m_);
        const auto start = std::chrono::steady_clock::now();
        for (int s = 5; !cv_.wait_until(lock, start + std::chrono::seconds(s), [this] { return done_; }); s += 10) {
            const std::string line = fmt::format("  [running] {} … {} s\n", name_, s);
            if (::write(STDOUT_FILENO, line.data(), line.size()) < 0) return;
        }
    }

    std::string name_;
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;  // last: it starts in the constructor and reads the members above
};

}  // namespace

bool report_case(const GradeCase& c, const CaseResult& r) {
    fmt::print("{}\n", case_line(c.name, r));
    if (r.status != "passed" && !r.detail.empty()) {
        std::istringstream lines(r.detail);
        for (std::string line; std::getline(lines, line);)
            if (!line.empty()) fmt::print("          {}\n", line);
    }
    std::fflush(stdout);
    return r.status == "passed";
}

CaseTally run_and_report_cases(const std::string& task, const std::vector<GradeCase>& cases, const std::string& suite) {
    CaseTally t;
    for (const GradeCase& c : cases) {
        if (!suite.empty() && c.suite != suite) continue;
        ++t.matched;
        std::fflush(stdout);  // the lines so far, before the progress thread writes past stdio
        const CaseResult r = [&] {
            Progress progress(c.name);
            return run_case(c);
        }();
        report_case(c, r);
        if (r.status == "passed") ++t.passed;
        else if (r.status == "error") ++t.errors;
        else if (r.status == "skipped") ++t.skipped;
        else ++t.failed;
    }
    if (t.matched == 0) {  // a suite name that is no suite: say which there are
        std::vector<std::string> names;
        for (const GradeCase& c : cases)
            if (!c.suite.empty() && std::find(names.begin(), names.end(), c.suite) == names.end()) names.push_back(c.suite);
        fmt::print("{}: no case is in suite '{}'; the suites are: {} (SUITE=… of make {}, or none for all)\n", task, suite,
                   fmt::join(names, ", "), task);
        std::fflush(stdout);
        return t;
    }
    std::string line = fmt::format("{}: {} passed, {} failed", task, t.passed, t.failed);
    if (t.errors) line += fmt::format(", {} error{}", t.errors, t.errors == 1 ? "" : "s");
    if (t.skipped) line += fmt::format(", {} skipped", t.skipped);
    fmt::print("{}{}\n", line, suite.empty() ? "" : fmt::format(" (suite {})", suite));
    std::fflush(stdout);
    return t;
}

}  // namespace attn
