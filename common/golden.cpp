// golden.cpp — see golden.h.
#include "golden.h"

#include <fmt/format.h>

#include <cstdlib>

#ifndef ATTNLAB_ROOT
#define ATTNLAB_ROOT "."
#endif

namespace attn {

static const char* kHint = "run \"make goldens\"";

std::string goldens_dir() {
    const char* env = std::getenv("ATTNLAB_GOLDENS");
    return env && *env ? env : std::string(ATTNLAB_ROOT) + "/goldens";
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
