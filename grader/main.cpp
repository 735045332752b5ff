// grader — grades every task of the rubric, each case in an isolated child process, and writes
// Results.md and results.json.
//
//   build/<impl>/bin/grader [--task N]... [--rubric grader/rubric.json] [--out DIR] [--impl NAME] [--timeout S]
//   make grade [IMPL=skeleton|reference]
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fmt/format.h>
#include <set>
#include <string>

#include "grader/isolate.h"
#include "grader/report.h"
#include "grader/rubric.h"
#include "grader/tasks.h"

#ifndef ATTNLAB_IMPL
#define ATTNLAB_IMPL "unknown"
#endif

namespace {

using namespace grader;

struct Options {
    std::set<int> only;
    std::string rubric = "grader/rubric.json", out = ".", impl = ATTNLAB_IMPL;
    double timeout_s = 0;  // overrides the rubric's case_timeout_s when > 0
};

[[noreturn]] void usage(const std::string& problem) {
    fmt::print(stderr, "grader: {}\nusage: grader [--task N]... [--rubric FILE] [--out DIR] [--impl NAME] [--timeout SECONDS]\n", problem);
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        if (a == "--task") {
            try {
                o.only.insert(std::stoi(value()));
            } catch (const std::exception&) {
                usage("--task takes a task number");
            }
        } else if (a == "--rubric") o.rubric = value();
        else if (a == "--out") o.out = value();
        else if (a == "--impl") o.impl = value();
        else if (a == "--timeout") o.timeout_s = std::atof(value().c_str());
        else usage("unknown option " + a);
    }
    return o;
}

std::string now_utc() {
    char buf[64];
    std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return buf;
}

std::string hostname() {
    char buf[256] = {0};
    gethostname(buf, sizeof buf - 1);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);
    Rubric rubric;
    try {
        rubric = load_rubric(opt.rubric);
    } catch (const std::exception& e) {
        usage(e.what());
    }
    if (opt.timeout_s > 0) rubric.case_timeout_s = opt.timeout_s;
    mkdir(opt.out.c_str(), 0755);
    const std::string logs = opt.out + "/logs";
    mkdir(logs.c_str(), 0755);

    GradeReport g{rubric.course, opt.impl, now_utc(), hostname(), "none used", {}};
    for (const RubricTask& rt : rubric.tasks) {
        if (!opt.only.empty() && !opt.only.count(rt.id)) continue;
        TaskReport t{rt.id, rt.title, rt.points, 0, "graded", "", {}};
        const auto& built = built_tasks();
        auto def = std::find_if(built.begin(), built.end(), [&](const TaskDef& d) { return d.id == rt.id; });
        if (def == built.end()) {
            t.status = "not available";
            t.note = "this task is not part of the build yet";
            g.tasks.push_back(t);
            fmt::print("task {}: not available\n", rt.id);
            continue;
        }
        fmt::print("task {}: {}\n", rt.id, rt.title);
        std::fflush(stdout);
        const auto cases = def->cases();
        const TaskRun run = run_isolated(*def, {rubric.case_timeout_s, rubric.memory_limit_mb,
                                                fmt::format("{}/task{}.log", logs, rt.id)});
        if (!run.device.empty()) g.gpu = run.device;
        if (!run.not_run.empty()) {
            if (g.gpu.rfind("none", 0) == 0) g.gpu = "none: " + run.not_run;
            t.status = "not run";
            t.note = run.not_run;
            g.tasks.push_back(t);
            fmt::print("task {}: not run: {}\n", rt.id, run.not_run);
            continue;
        }
        for (size_t i = 0; i < cases.size(); ++i) {
            t.cases.push_back({cases[i].name, cases[i].weight, run.results[i]});
            fmt::print("{}\n", attn::case_line(cases[i].name, run.results[i]));
        }
        score_task(t);
        fmt::print("task {}: {:.2f} / {:.0f}\n", rt.id, t.score, t.points);
        g.tasks.push_back(t);
    }
    write_results_md(g, opt.out + "/Results.md");
    write_results_json(g, opt.out + "/results.json");
    fmt::print("score {:.2f} / {:.0f} — wrote {}/Results.md and results.json\n", total_score(g), max_score(g), opt.out);
    return 0;
}
