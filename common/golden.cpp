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

std::string repo_path(const char* env_var, const std::string& relative) {
    const char* env = env_var ? std::getenv(env_var) : nullptr;
    if (env && *env) return env;
    const std::string built = std::string(ATTNLAB_ROOT) + "/" + relative;
    struct stat st {};
    return stat(built.c_str(), &st) == 0 ? built : relative;
}

std::string goldens_dir() { return repo_path("ATTNLAB_GOLDENS", "goldens"); }

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
