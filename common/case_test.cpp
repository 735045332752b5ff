// case_test.cpp — the per-case line a test run prints (see case_test.h).
#include "common/case_test.h"

#include <cstdio>

namespace attn {

bool report_case(const GradeCase& c, const CaseResult& r) {
    fmt::print("{}\n", case_line(c.name, r));
    std::fflush(stdout);
    return r.status == "passed";
}

}  // namespace attn
