// report.cpp — see report.h.
#include "grader/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace grader {
namespace {

std::string fmt_err(const attn::CaseResult& r) {
    if (r.nonfinite_output) return "NaN/Inf";
    return r.max_abs_err >= 0 ? fmt::format("{:.2e}", r.max_abs_err) : "–";
}
std::string fmt_ms(const attn::CaseResult& r) { return r.ms >= 0 ? fmt::format("{:.1f} ms", r.ms) : "–"; }

// Table cells must not break the Markdown table.
std::string cell(std::string s) {
    for (char& c : s)
        if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
    return s;
}

double correctness_points(const TaskReport& t) { return t.points * (1.0 - t.perf_share); }

double case_points(const TaskReport& t, const CaseRow& c) {
    double total = 0;
    for (const auto& x : t.cases) total += x.weight;
    return total > 0 ? correctness_points(t) * c.weight / total : 0;
}

double perf_points(const TaskReport& t, const PerfRow&) {
    return t.perf.rows.empty() ? 0 : t.points * t.perf_share / double(t.perf.rows.size());
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << text;
}

std::string perf_table(const TaskReport& t) {
    const bool credited = t.perf_share > 0;
    std::string md = credited ? fmt::format("\nPerformance ({:.0f}% of the points; the reference timed on the same GPU in "
                                            "the same run):\n\n",
                                            100 * t.perf_share)
                              : std::string("\nSpeed (shown for the roofline, not credited; the reference timed on the same "
                                            "GPU in the same run where it is here):\n\n");
    if (t.perf.rows.empty()) return md + (t.perf.note.empty() ? "not measured" : t.perf.note) + "\n";
    md += fmt::format("{}: ceilings measured in the same run: copy {:.0f} GB/s, cuBLAS SGEMM {:.1f} TFLOP/s. A time is the "
                      "grader's own clock: what a runner's timed requests (many calls back to back, fresh inputs each, L2 "
                      "flushed) took beyond the same requests to the harness alone, per call; no runner reports a time.\n\n",
                      t.perf.gpu, t.perf.copy_gbps, t.perf.sgemm_tflops);
    if (!t.perf.note.empty()) md += t.perf.note + ".\n\n";
    std::vector<std::string> baselines;  // every row's, in order of first appearance
    for (const auto& r : t.perf.rows)
        for (const auto& [name, ms] : r.baseline_ms)
            if (std::find(baselines.begin(), baselines.end(), name) == baselines.end()) baselines.push_back(name);
    // A bandwidth-bound task (Task 5) is shown in GB/s against the copy bandwidth; the others in
    // TFLOP/s against cuBLAS SGEMM.
    bool by_bytes = true;
    for (const auto& r : t.perf.rows) by_bytes = by_bytes && r.bandwidth_bound;
    auto rate = [&](const PerfRow& r) {
        const double ceiling = by_bytes ? t.perf.copy_gbps : t.perf.sgemm_tflops, v = by_bytes ? r.gbps : r.tflops;
        return fmt::format(by_bytes ? "{:.0f} | {}" : "{:.1f} | {}", v,
                           ceiling > 0 ? fmt::format("{:.0f}%", 100 * v / ceiling) : std::string("–"));
    };
    md += by_bytes ? "| shape | time | GB/s | % of copy | reference | ratio | credit |"
                   : "| shape | time | TFLOP/s | % of SGEMM | reference | ratio | credit |";
    for (const auto& b : baselines) md += fmt::format(" {} | speedup vs it |", b);
    md += " checked calls | flag |\n|---|---|---|---|---|---|---|";
    for (size_t i = 0; i < baselines.size(); ++i) md += "---|---|";
    md += "---|---|\n";
    for (const auto& r : t.perf.rows) {
        md += fmt::format("| {} | {:.3f} ms | {} | {} | {} | {} |", r.name, r.ms, rate(r),
                          r.ref_ms > 0 ? fmt::format("{:.3f} ms", r.ref_ms) : "–",
                          r.ref_ms > 0 ? fmt::format("{:.2f}", r.ms / r.ref_ms) : "–",
                          credited ? fmt::format("{:.0f}%", 100 * r.credit) : "–");
        for (const auto& b : baselines) {
            if (!r.baseline_ms.count(b)) {
                md += " – | – |";
                continue;
            }
            const double ms = r.baseline_ms.at(b);
            md += fmt::format(" {:.3f} ms | {:.2f}× |", ms, ms / r.ms);
        }
        md += fmt::format(" {} | {} |\n", r.checked_calls, cell(r.flag.empty() ? "–" : r.flag));
    }
    return md;
}

// What one untimed call launched at each shape (grid, block, SMs filled), as the submission's runner recorded it.
std::string launches_table(const TaskReport& t) {
    std::string md;
    for (const auto& r : t.perf.rows)
        if (!r.launches.empty()) md += fmt::format("| {} | {} |\n", r.name, cell(r.launches));
    if (md.empty()) return "";
    return "\nThe kernels of one untimed call at each shape, as your runner recorded them (CUDA's launch callbacks; a "
           "diagnostic, not graded): how many blocks each launch has, and how many of the GPU's SMs they can fill.\n\n"
           "| shape | kernels |\n|---|---|\n" + md;
}

std::string gb(double bytes) { return bytes >= 1e9 ? fmt::format("{:.2f} GB", bytes / 1e9) : fmt::format("{:.1f} MB", bytes / 1e6); }

// Task 4: the memory fusing saves, per timed shape — computed (the S×S scores the unfused pipeline
// writes) and measured (the device's used memory during one call, watched by the grader).
std::string memory_table(const TaskReport& t) {
    bool any = false;
    for (const auto& r : t.perf.rows) any = any || !r.memory_bytes.empty();
    if (!any) return "";
    std::string md =
        "\nMemory, side by side: the unfused pipeline (cuBLAS + softmax) writes the S×S scores to device memory; "
        "a fused kernel keeps them on chip. Measured: the GPU's used memory during one timed request, watched by the "
        "grader (the pipeline in slices of at most 1 GB of scores, as it is timed; the submission's runner and the null "
        "runner — the harness with a submission that does nothing — each fresh, from before it starts: its CUDA context, "
        "inputs and output and the timing's L2-flush buffer included).\n\n"
        "| shape | Q, K, V, O | S×S scores, all heads | pipeline measured | submission's runner | harness alone | "
        "submission beyond the harness |\n|---|---|---|---|---|---|---|\n";
    for (const auto& r : t.perf.rows) {
        const auto& m = r.memory_bytes;
        auto at = [&](const char* k) { return m.count(k) ? m.at(k) : 0.0; };
        if (m.empty()) continue;
        const bool sliced = at("scores_slice_bytes") < at("scores_bytes");
        const bool measured = m.count("submission_peak_bytes") && m.count("null_peak_bytes");
        const std::string mine = measured ? gb(at("submission_peak_bytes")) : cell("not measured: " + r.memory_error);
        md += fmt::format("| {} | {} | {}{} | {} | {} | {} | {} |\n", r.name, gb(at("io_bytes")), gb(at("scores_bytes")),
                          sliced ? fmt::format(" (in slices of {})", gb(at("scores_slice_bytes"))) : "",
                          gb(at("pipeline_peak_bytes")), mine, measured ? gb(at("null_peak_bytes")) : "–",
                          measured ? gb(std::max(0.0, at("submission_peak_bytes") - at("null_peak_bytes"))) : "–");
    }
    return md;
}

// What a case measured besides pass/fail (Task 6's TTFT and TBT, …), one line per case.
std::string metrics_lines(const TaskReport& t) {
    std::string md;
    for (const auto& c : t.cases) {
        if (!c.result.metrics.empty()) {
            std::vector<std::string> parts;
            for (const auto& [name, value] : c.result.metrics) parts.push_back(fmt::format("{} **{:.4g}**", name, value));
            md += fmt::format("\n{} ({}): {}\n", c.name, c.result.status, fmt::join(parts, " · "));
        }
        if (!c.result.output.empty()) md += fmt::format("\n{}:\n\n{}\n", c.name, c.result.output);
    }
    return md;
}

}  // namespace

bool all_cases_passed(const TaskReport& t) {
    for (const auto& c : t.cases)
        if (c.result.status != "passed") return false;
    return !t.cases.empty();
}

void score_task(TaskReport& t) {
    t.score = 0;
    if (!t.flags.empty()) return;
    for (const auto& c : t.cases)
        if (c.result.status == "passed") t.score += case_points(t, c);
    for (const auto& r : t.perf.rows) t.score += r.credit * perf_points(t, r);
}

double total_score(const GradeReport& g) {
    if (!g.edited_files.empty() && g.edited_scores_zero) return 0;
    double s = 0;
    for (const auto& t : g.tasks) s += t.score;
    return s;
}

double bonus_score(const GradeReport& g) {
    if (!g.edited_files.empty() && g.edited_scores_zero) return 0;
    double s = 0;
    for (const auto& t : g.bonus) s += t.score;
    return s;
}

double max_score(const GradeReport& g) {
    double s = 0;
    for (const auto& t : g.tasks) s += t.points;
    return s;
}

// "Task 4" or "Bonus 4b": how a part is named in Results.md and results.json.
std::string part_name(const TaskReport& t) { return t.bonus.empty() ? fmt::format("Task {}", t.id) : "Bonus " + t.bonus; }

std::string score_row(const TaskReport& t) {
    return fmt::format("| {} | {} | {:.2f} / {:.0f} | {} |\n", t.bonus.empty() ? std::to_string(t.id) : t.bonus, t.title,
                       t.score, t.points,
                       cell(!t.flags.empty() ? "flagged: " + fmt::format("{}", fmt::join(t.flags, "; "))
                            : t.note.empty() ? t.status : t.status + ": " + t.note));
}

std::string task_section(const TaskReport& t) {
    std::string md = fmt::format("\n## {} — {} ({:.2f} / {:.0f})\n\n", part_name(t), t.title, t.score, t.points);
    for (const auto& f : t.flags) md += fmt::format("**Flagged:** {}\n\n", f);
    if (t.cases.empty()) {  // not run, not available — or timed only (--perf-only)
        md += fmt::format("{}{}\n", t.status, t.note.empty() ? "" : ": " + t.note);
        if (!t.perf.rows.empty()) md += perf_table(t) + memory_table(t) + launches_table(t);
        return md;
    }
    md += "| case | shape | max abs err | time | status |\n|---|---|---|---|---|\n";
    for (const auto& c : t.cases) {
        const auto& r = c.result;
        md += fmt::format("| {} | {} | {} | {} | {} |\n", cell(c.name), cell(r.shape), fmt_err(r), fmt_ms(r),
                          cell(r.reason.empty() ? r.status : r.status + ": " + r.reason));
    }
    md += metrics_lines(t);
    if (t.perf_timed) md += perf_table(t) + memory_table(t) + launches_table(t);
    return md;
}

void write_results_md(const GradeReport& g, const std::string& path) {
    std::string md = fmt::format("# Results — {}\n\n", g.course);
    md += fmt::format("- implementation: `{}`\n- date: {}\n- host: {}\n- GPU: {}\n- GRADER_SEED: {} (fresh inputs; set it to "
                      "reproduce this run)\n- sandbox of the submission's code: {}\n\n",
                      g.impl, g.date, g.host, g.gpu, g.seed, g.sandbox);
    if (!g.graded_on.empty()) md.insert(md.find("- GRADER_SEED"), fmt::format("- graded on: {}\n", g.graded_on));
    if (!g.edited_files.empty())
        md += fmt::format("**Harness edited — results not trusted{}:** {}\n\n", g.edited_scores_zero ? ", score 0" : "",
                          fmt::join(g.edited_files, ", "));
    md += fmt::format("## Score: {:.2f} / {:.0f}\n\n| task | title | score | status |\n|---|---|---|---|\n", total_score(g),
                      max_score(g));
    for (const auto& t : g.tasks) md += score_row(t);
    if (!g.bonus.empty()) {
        double bonus_max = 0;
        for (const auto& b : g.bonus) bonus_max += b.points;
        md += fmt::format("\n**Bonus: {:.2f} / {:.0f}**, scored apart (not in the score above):\n\n| part | title | score | "
                          "status |\n|---|---|---|---|\n",
                          bonus_score(g), bonus_max);
        for (const auto& t : g.bonus) md += score_row(t);
    }
    for (const auto& t : g.tasks) md += task_section(t);
    for (const auto& t : g.bonus) md += task_section(t);
    write_file(path, md);
}

void write_results_json(const GradeReport& g, const std::string& path) {
    nlohmann::json tests = nlohmann::json::array();
    auto flagged = [](const TaskReport& t) { return t.flags.empty() ? std::string() : fmt::format("FLAGGED: {}\n", fmt::join(t.flags, "; ")); };
    std::vector<const TaskReport*> parts;  // the tasks, then the bonus parts ("Bonus 4b: …")
    for (const auto& t : g.tasks) parts.push_back(&t);
    for (const auto& t : g.bonus) parts.push_back(&t);
    for (const TaskReport* part : parts) {
        const TaskReport& t = *part;
        if (t.cases.empty() && t.perf.rows.empty()) {
            tests.push_back({{"name", fmt::format("{}: {}", part_name(t), t.title)},
                             {"score", 0.0},
                             {"max_score", t.points},
                             {"status", "failed"},
                             {"output", flagged(t) + t.status + (t.note.empty() ? "" : ": " + t.note)},
                             {"visibility", "visible"},
                             {"extra_data", {{"task", t.id}, {"bonus", t.bonus}, {"state", t.status}, {"flags", t.flags}}}});
            continue;
        }
        for (const auto& c : t.cases) {
            const auto& r = c.result;
            const bool passed = r.status == "passed" && t.flags.empty();
            tests.push_back({{"name", fmt::format("{}: {}", part_name(t), c.name)},
                             {"score", passed ? case_points(t, c) : 0.0},
                             {"max_score", case_points(t, c)},
                             {"status", passed ? "passed" : "failed"},
                             {"output", fmt::format("{}{} {}{}\n{}", flagged(t), r.status, r.shape,
                                                    r.reason.empty() ? "" : ": " + r.reason, r.detail)},
                             {"visibility", "visible"},
                             {"extra_data",
                              {{"task", t.id}, {"bonus", t.bonus}, {"state", r.status}, {"reason", r.reason}, {"shape", r.shape},
                               {"max_abs_err", r.max_abs_err}, {"ms", r.ms}, {"metrics", r.metrics}, {"flags", t.flags}}}});
        }
        if (t.perf_timed && t.perf.rows.empty())
            tests.push_back({{"name", fmt::format("{}: performance", part_name(t))},
                             {"score", 0.0},
                             {"max_score", t.points * t.perf_share},
                             {"status", "failed"},
                             {"output", t.perf.note},
                             {"visibility", "visible"},
                             {"extra_data", {{"task", t.id}, {"bonus", t.bonus}, {"state", "not measured"}, {"reason", t.perf.note}}}});
        for (const auto& p : t.perf.rows) {
            const double earned = t.flags.empty() ? p.credit * perf_points(t, p) : 0.0;
            tests.push_back({{"name", fmt::format("{}: performance {}", part_name(t), p.name)},
                             {"score", earned},
                             {"max_score", perf_points(t, p)},
                             {"status", earned > 0 || (t.perf_share == 0 && p.flag.empty()) ? "passed" : "failed"},
                             {"output", fmt::format("{}{:.3f} ms (reference {:.3f} ms), credit {:.0f}% {}", flagged(t), p.ms,
                                                    p.ref_ms, 100 * p.credit, p.flag)},
                             {"visibility", "visible"},
                             {"extra_data",
                              {{"task", t.id}, {"bonus", t.bonus}, {"state", "performance"}, {"reason", p.flag}, {"ms", p.ms},
                               {"reference_ms", p.ref_ms}, {"tflops", p.tflops}, {"gbps", p.gbps}, {"baselines_ms", p.baseline_ms},
                               {"flops", p.flops}, {"bytes", p.bytes}, {"copy_gbps", t.perf.copy_gbps},
                               {"sgemm_tflops", t.perf.sgemm_tflops}, {"estimate", p.estimate}, {"memory_bytes", p.memory_bytes},
                               {"checked_calls", p.checked_calls}, {"failed_calls", p.failed_calls}}}});
        }
    }
    const bool zeroed = !g.edited_files.empty() && g.edited_scores_zero;
    if (zeroed)  // Gradescope sums the tests unless "score" is given: it is, and says 0
        tests.push_back({{"name", "Harness integrity"},
                         {"score", 0.0},
                         {"max_score", 0.0},
                         {"status", "failed"},
                         {"output", fmt::format("harness edited: {}", fmt::join(g.edited_files, ", "))},
                         {"visibility", "visible"},
                         {"extra_data", {{"task", 0}, {"state", "harness edited"}, {"reason", "harness edited"}}}});
    nlohmann::json ceilings = nlohmann::json::object();  // each timed task's measured roofs (tools/pictures/plot_results.py)
    for (const auto& t : g.tasks)
        if (!t.perf.rows.empty())
            ceilings[std::to_string(t.id)] = {{"gpu", t.perf.gpu}, {"copy_gbps", t.perf.copy_gbps}, {"sgemm_tflops", t.perf.sgemm_tflops}};
    nlohmann::json j = {{"score", total_score(g)},
                        {"output", fmt::format("{} — implementation {}, {}, GPU: {}, GRADER_SEED {}", g.course, g.impl, g.date,
                                               g.gpu, g.seed)},
                        {"visibility", "visible"},
                        {"tests", tests},
                        {"extra_data",
                         {{"impl", g.impl}, {"date", g.date}, {"host", g.host}, {"gpu", g.gpu}, {"seed", g.seed},
                          {"sandbox", g.sandbox}, {"edited_files", g.edited_files}, {"ceilings", ceilings},
                          {"bonus_score", bonus_score(g)}, {"graded_on", g.graded_on}}}};
    write_file(path, j.dump(2) + "\n");
}

}  // namespace grader
