// test_main.cpp — Catch2's main, compiled once and linked into every CPU test binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
