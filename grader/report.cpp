// report.cpp — see report.h.
#include "grader/report.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace grader {
namespace {

std::string fmt_err(const attn::CaseResult& r) { return r.max_abs_err >= 0 ? fmt::format("{:.2e}", r.max_abs_err) : "–"; }
std::string fmt_ms(const attn::CaseResult& r) { return r.ms >= 0 ? fmt::format("{:.1f} ms", r.ms) : "–"; }

// Table cells must not break the Markdown table.
std::string cell(std::string s) {
    for (char& c : s)
        if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
    return s;
}

double case_points(const TaskReport& t, const CaseRow& c) {
    double total = 0;
    for (const auto& x : t.cases) total += x.weight;
    return total > 0 ? t.points * c.weight / total : 0;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << text;
}

}  // namespace

void score_task(TaskReport& t) {
    t.score = 0;
    for (const auto& c : t.cases)
        if (c.result.status == "passed") t.score += case_points(t, c);
}

double total_score(const GradeReport& g) {
    double s = 0;
    for (const auto& t : g.tasks) s += t.score;
    return s;
}

double max_score(const GradeReport& g) {
    double s = 0;
    for (const auto& t : g.tasks) s += t.points;
    return s;
}

void write_results_md(const GradeReport& g, const std::string& path) {
    std::string md = fmt::format("# Results — {}\n\n", g.course);
    md += fmt::format("- implementation: `{}`\n- date: {}\n- host: {}\n- GPU: {}\n\n", g.impl, g.date, g.host, g.gpu);
    md += fmt::format("## Score: {:.2f} / {:.0f}\n\n| task | title | score | status |\n|---|---|---|---|\n",
                      total_score(g), max_score(g));
    for (const auto& t : g.tasks)
        md += fmt::format("| {} | {} | {:.2f} / {:.0f} | {} |\n", t.id, t.title, t.score, t.points,
                          t.note.empty() ? t.status : t.status + ": " + t.note);
    for (const auto& t : g.tasks) {
        md += fmt::format("\n## Task {} — {} ({:.2f} / {:.0f})\n\n", t.id, t.title, t.score, t.points);
        if (t.cases.empty()) {
            md += fmt::format("{}{}\n", t.status, t.note.empty() ? "" : ": " + t.note);
            continue;
        }
        md += "| case | shape | max abs err | time | status |\n|---|---|---|---|---|\n";
        for (const auto& c : t.cases) {
            const auto& r = c.result;
            md += fmt::format("| {} | {} | {} | {} | {} |\n", cell(c.name), cell(r.shape), fmt_err(r), fmt_ms(r),
                              cell(r.reason.empty() ? r.status : r.status + ": " + r.reason));
        }
    }
    write_file(path, md);
}

void write_results_json(const GradeReport& g, const std::string& path) {
    nlohmann::json tests = nlohmann::json::array();
    for (const auto& t : g.tasks) {
        if (t.cases.empty()) {
            tests.push_back({{"name", fmt::format("Task {}: {}", t.id, t.title)},
                             {"score", 0.0},
                             {"max_score", t.points},
                             {"status", "failed"},
                             {"output", t.status + (t.note.empty() ? "" : ": " + t.note)},
                             {"visibility", "visible"},
                             {"extra_data", {{"task", t.id}, {"state", t.status}}}});
            continue;
        }
        for (const auto& c : t.cases) {
            const auto& r = c.result;
            const bool passed = r.status == "passed";
            tests.push_back({{"name", fmt::format("Task {}: {}", t.id, c.name)},
                             {"score", passed ? case_points(t, c) : 0.0},
                             {"max_score", case_points(t, c)},
                             {"status", passed ? "passed" : "failed"},
                             {"output", fmt::format("{} {}{}\n{}", r.status, r.shape, r.reason.empty() ? "" : ": " + r.reason, r.detail)},
                             {"visibility", "visible"},
                             {"extra_data",
                              {{"task", t.id}, {"state", r.status}, {"reason", r.reason}, {"shape", r.shape},
                               {"max_abs_err", r.max_abs_err}, {"ms", r.ms}, {"metrics", r.metrics}}}});
        }
    }
    nlohmann::json j = {{"score", total_score(g)},
                        {"output", fmt::format("{} — implementation {}, {}, GPU: {}", g.course, g.impl, g.date, g.gpu)},
                        {"visibility", "visible"},
                        {"tests", tests},
                        {"extra_data", {{"impl", g.impl}, {"date", g.date}, {"host", g.host}, {"gpu", g.gpu}}}};
    write_file(path, j.dump(2) + "\n");
}

}  // namespace grader
