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

// A proxied call's device arguments where a null pointer must reach the student's function as null (it must refuse
// it by name): a null travels as a one-float host stand-in and its index is listed in `null`, which the call sends
// as its "null" argument; the runner's side hands the function nullptr in its place (serve.h, nullable()).
struct NullableArgs {
    std::vector<Arg> args;
    nlohmann::json null = nlohmann::json::array();
    void add(const void* p, size_t floats, Role role) {
        static float stand_in = 0.0f;
        if (!p) null.push_back(args.size());
        args.push_back(p ? Arg{static_cast<float*>(const_cast<void*>(p)), floats, role, true} : in(&stand_in, 1));
    }
};

}  // namespace attn::remote
