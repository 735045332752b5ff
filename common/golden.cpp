// golden.cpp — see golden.h.
#include "golden.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cstdlib>

#ifndef ATTNLAB_ROOT
#define ATTNLAB_ROOT "."
#endif

namespace attn {

static const char* kHint = "run \"make goldens\"";

// $ATTNLAB_GOLDENS, else the checkout the binary was built in, else ./goldens (a binary that
// travelled to another machine and runs from the repository root there).
std::string goldens_dir() {
    const char* env = std::getenv("ATTNLAB_GOLDENS");
    if (env && *env) return env;
    const std::string built = std::string(ATTNLAB_ROOT) + "/goldens";
    struct stat st {};
    return stat(built.c_str(), &st) == 0 ? built : "goldens";
}

std::string golden_path(const std::string& task, const std::string& name) {
    return fmt::format("{}/{}/{}.safetensors", goldens_dir(), task, name);
}

SafetensorsFile open_golden(const std::string& task, const std::string& name) {
    SafetensorsFile f(golden_path(task, name), kHint);
    const int version = golden_int(f, "format_version");
    if (version != kGoldenFormatVersion)
        throw GoldenError(fmt::format("{}: stale golden (format {}, this harness reads {}) — {}", f.path(), version,
                                      kGoldenFormatVersion, kHint));
    return f;
}

int golden_int(const SafetensorsFile& f, const std::string& key) {
    const std::string v = f.metadata(key);
    try {
        return std::stoi(v);
    } catch (const std::exception&) {
        throw GoldenError(fmt::format("{}: metadata '{}' = '{}' is not an integer — {}", f.path(), key, v, kHint));
    }
}

Tolerance golden_tolerance(const SafetensorsFile& f) {
    try {
        return Tolerance{std::stod(f.metadata("atol")), std::stod(f.metadata("rtol"))};
    } catch (const std::invalid_argument&) {
        throw GoldenError(fmt::format("{}: metadata atol/rtol are not numbers — {}", f.path(), kHint));
    }
}

}  // namespace attn
