// golden.h — where golden files live and how a case opens one.
//
// goldens/taskN/<case>.safetensors under the repository (or $ATTNLAB_GOLDENS). Each carries
// __metadata__ with format_version, seed, torch_version, atol, rtol. A missing or stale file
// fails with the hint `run "make goldens"`.
#pragma once
#include <string>

#include "compare.h"
#include "safetensors.h"

namespace attn {

constexpr int kGoldenFormatVersion = 1;  // bump together with tools/goldens/make_goldens.py

// A file of the repository: $env_var if set, else `relative` in the checkout the binary was built
// in, else `relative` from the working directory (a binary that travelled to another machine and
// runs from the repository root there).
std::string repo_path(const char* env_var, const std::string& relative);

std::string goldens_dir();  // repo_path("ATTNLAB_GOLDENS", "goldens")
std::string golden_path(const std::string& task, const std::string& name);
// Opens and validates goldens/<task>/<name>.safetensors, format version included.
SafetensorsFile open_golden(const std::string& task, const std::string& name);
Tolerance golden_tolerance(const SafetensorsFile& f);
int golden_int(const SafetensorsFile& f, const std::string& key);

}  // namespace attn
