// symbols.h — which library calls a student's object files make (nm), for tasks that forbid them.
#pragma once
#include <string>
#include <vector>

namespace grader {

// Undefined symbols (demangled) of `objects` that contain any of `forbidden`, as
// "file: symbol". An object that cannot be read is reported too.
std::vector<std::string> forbidden_calls(const std::vector<std::string>& objects, const std::vector<std::string>& forbidden);

}  // namespace grader
