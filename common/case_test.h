// case_test.h — turns a task's graded cases into Catch2 tests (one section per case).
//
// The same cases the grader scores, so a student's `make taskN` and the grader never disagree.
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fmt/format.h>

#include "common/cases.h"
#include "common/remote/runner.h"

namespace attn {
// Prints one result line per case and returns whether it passed.
bool report_case(const GradeCase& c, const CaseResult& r);
}  // namespace attn

#define ATTNLAB_CASE_TESTS(task, cases_fn)                                     \
    TEST_CASE(task " graded cases", "[" task "]") {                            \
        const char* suite_ = std::getenv("ATTNLAB_SUITE");                     \
        attn::remote::use_task(std::atoi(task + 4)); /* "taskN": runner_taskN */ \
        int matched_ = 0;                                                      \
        for (const attn::GradeCase& c : cases_fn()) {                          \
            if (suite_ && *suite_ && c.suite != suite_) continue;              \
            ++matched_;                                                        \
            DYNAMIC_SECTION(c.name) {                                          \
                const attn::CaseResult r = attn::run_case(c);                  \
                INFO(task << " / " << c.name << ": " << r.reason << "\n" << r.detail); \
                CHECK(attn::report_case(c, r));                                \
            }                                                                  \
        }                                                                      \
        INFO("no case of " task " is in suite '" << (suite_ ? suite_ : "") << "'"); \
        REQUIRE(matched_ > 0);                                                 \
    }
