// case_test.cpp — the per-case lines and the summary a test run prints (see case_test.h).
#include "common/case_test.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace attn {

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
        const CaseResult r = run_case(c);
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
