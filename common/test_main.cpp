// test_main.cpp — Catch2's main, compiled once and linked into every CPU test binary.
// The reporter is attnlab's (common/catch_reporter.h): compact, one line per failed assertion, and no
// Catch2 totals after a task's cases, which print their own lines and summary (common/case_test.h);
// `-r console` gives Catch2's full blocks back.
#define CATCH_CONFIG_MAIN
#define CATCH_CONFIG_DEFAULT_REPORTER "attnlab"
#include <catch2/catch.hpp>

#include "common/catch_reporter.h"
