// test_main.cpp — Catch2's main, compiled once and linked into every CPU test binary.
// The compact reporter is the default: one line per failed assertion (a task's cases print their
// own lines and summary, common/case_test.h); `-r console` gives Catch2's full blocks back.
#define CATCH_CONFIG_MAIN
#define CATCH_CONFIG_DEFAULT_REPORTER "compact"
#include <catch2/catch.hpp>
