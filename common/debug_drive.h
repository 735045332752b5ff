// debug_drive.h — the frame of the CPU tasks' debugging drivers, build/<impl>/debug/drive_taskN (taskN/drive_taskN.cpp):
// the task's functions called in this one process — no runner, nothing judged, no part in grading — on small ragged
// shapes, each call announced before it runs. Built with AddressSanitizer and UBSan (`make asan-taskN`: a bad read or
// write stops at its line, with the stack) or for gdb (`make gdb-taskN`: a crash stops in the debugger at its line).
//
//   drive_taskN           every step of the task, in order
//   drive_taskN NAME      only the calls whose announcement contains NAME (e.g. `softmax_rows`, `S=127`)
//
// Exit codes: 0 done, 1 the task's code threw (one line says which call), 2 usage.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/todo.h"

namespace attn::debug {

// The driver's start: its one optional argument (the calls to keep; exit 2 on more), and what the student's code prints
// reaching the screen at once, even when the next line crashes.
inline std::string start(int argc, char** argv, const char* program) {
    if (argc > 2) std::fprintf(stderr, "usage: %s [NAME]\n", program), std::exit(2);
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    return argc == 2 ? argv[1] : "";
}

// Random normal floats, the same every run (a crash you can reproduce).
inline std::vector<float> random_floats(size_t n, unsigned seed) {
    std::mt19937 g(seed);
    std::normal_distribution<float> d;
    std::vector<float> v(n);
    for (float& x : v) x = d(g);
    return v;
}

// Announces the call on stderr (unbuffered: it is on the screen before a crash), runs it, says it returned.
// A NotImplemented step is said and skipped; any other exception ends the driver with exit 1.
inline void call(const std::string& filter, const std::string& what, const std::function<void()>& fn) {
    if (!filter.empty() && what.find(filter) == std::string::npos) return;
    std::fprintf(stderr, "calling %s ...\n", what.c_str());
    try {
        fn();
    } catch (const NotImplemented& e) {
        std::fprintf(stderr, "  %s: skipped\n", e.what());
        return;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "  %s threw: %s\n", what.c_str(), e.what());
        std::exit(1);
    }
    std::fprintf(stderr, "  returned\n");
}

}  // namespace attn::debug
