// rubric.cpp — see rubric.h.
#include "grader/rubric.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace grader {

Rubric load_rubric(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(fmt::format("rubric {}: file not found", path));
    try {
        const nlohmann::json j = nlohmann::json::parse(in);
        Rubric r;
        r.course = j.value("course", "");
        r.case_timeout_s = j.value("case_timeout_s", 120.0);
        r.memory_limit_mb = j.value("memory_limit_mb", 0L);
        for (const auto& t : j.at("tasks"))
            r.tasks.push_back({t.at("id").get<int>(), t.at("title").get<std::string>(), t.at("points").get<double>()});
        return r;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("rubric {}: {}", path, e.what()));
    }
}

}  // namespace grader
