// case_test.h — turns a task's graded cases into one Catch2 test.
//
// The same cases the grader scores, so a student's `make taskN` and the grader never disagree.
// Each case prints one line (its status, shape, error and, on failure, the reason), the details of
// a failure (first mismatches, …) once beneath it, and the run ends with one summary line, e.g.
// `task4: 12 passed, 3 failed, 1 error`. Catch2 itself sees one assertion: every case passed.
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "common/cases.h"
#include "common/remote/runner.h"

namespace attn {
// Prints one result line per case (and its details on failure) and returns whether it passed.
bool report_case(const GradeCase& c, const CaseResult& r);

struct CaseTally {
    int matched = 0, passed = 0, failed = 0, errors = 0, skipped = 0;
    bool all_passed() const { return matched > 0 && passed == matched; }
};

// Runs the cases of `task` (only those of `suite`, when not empty), printing each case's line and
// a summary line at the end; returns the counts.
CaseTally run_and_report_cases(const std::string& task, const std::vector<GradeCase>& cases, const std::string& suite);
}  // namespace attn

#define ATTNLAB_CASE_TESTS(task, cases_fn)                                                       \
    TEST_CASE(task " graded cases", "[" task "]") {                                              \
        const char* suite_ = std::getenv("ATTNLAB_SUITE");                                       \
        attn::remote::use_task(std::atoi(task + 4)); /* "taskN": runner_taskN */                 \
        const attn::CaseTally tally_ = attn::run_and_report_cases(task, cases_fn(), suite_ ? suite_ : ""); \
        {                                                                                        \
            INFO("no case of " task " is in suite '" << (suite_ ? suite_ : "") << "'");          \
            REQUIRE(tally_.matched > 0);                                                         \
        }                                                                                        \
        const bool every_case_passed = tally_.all_passed();                                      \
        CHECK(every_case_passed);                                                                \
    }
