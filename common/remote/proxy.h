// proxy.h — helpers for a task's proxies (taskN/remote.cpp): element counts from the interface's
// shape arguments.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>

#include "common/remote/runner.h"

namespace attn::remote {

// The product of the dimensions; a negative one is passed to the runner as 0 elements so that
// the student's own argument check still decides what happens.
inline size_t count(std::initializer_list<int64_t> dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= d > 0 ? size_t(d) : 0;
    return n;
}

}  // namespace attn::remote
