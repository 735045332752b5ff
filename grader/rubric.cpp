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
        r.bench_timeout_s = j.value("bench_timeout_s", 900.0);
        r.memory_limit_mb = j.value("memory_limit_mb", 0L);
        r.edited_harness_scores_zero = j.value("edited_harness_scores_zero", true);
        auto task = [&](const nlohmann::json& t) {
            RubricTask rt{t.at("id").get<int>(), t.value("bonus", std::string()), t.at("title").get<std::string>(),
                          t.at("points").get<double>(), {}, {}, {}, {}};
            if (t.contains("performance")) {
                const auto& p = t.at("performance");
                rt.perf.timed = true;
                rt.perf.share = p.at("share");
                if (p.contains("curve")) rt.perf.curve = p.at("curve").get<std::vector<std::pair<double, double>>>();
                rt.perf.peak_over_sgemm = p.value("peak_over_sgemm", rt.perf.peak_over_sgemm);  // a tensor-core part's floor
                bool ok = rt.perf.share >= 0 && rt.perf.share <= 1 && !rt.perf.curve.empty() && rt.perf.peak_over_sgemm > 0;
                for (size_t i = 0; i < rt.perf.curve.size(); ++i) {
                    const auto [x, y] = rt.perf.curve[i];
                    ok = ok && x > 0 && y >= 0 && y <= 1 &&
                         (i == 0 || (x > rt.perf.curve[i - 1].first && y <= rt.perf.curve[i - 1].second));
                }
                if (!ok)
                    throw std::runtime_error(fmt::format("rubric {}: task {}: share must be in [0, 1], and the curve a list of "
                                                         "[ratio, credit] points with ratios increasing and credit in [0, 1] "
                                                         "not increasing (peak_over_sgemm, where given, positive)", path, rt.id));
            }
            rt.harness = t.value("harness", std::vector<std::string>{});
            rt.requires_calls = t.value("requires_calls", std::vector<std::string>{});
            rt.requires_calls_suites = t.value("requires_calls_suites", std::vector<std::string>{});
            return rt;
        };
        for (const auto& t : j.at("tasks")) r.tasks.push_back(task(t));
        for (const auto& t : j.value("bonus", nlohmann::json::array())) {
            r.bonus.push_back(task(t));
            if (r.bonus.back().bonus.empty())
                throw std::runtime_error(fmt::format("rubric {}: a bonus part needs its key (\"bonus\": \"4b\")", path));
        }
        return r;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("rubric {}: {}", path, e.what()));
    }
}

}  // namespace grader
