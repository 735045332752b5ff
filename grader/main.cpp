// grader — grades every task of the rubric: each case in an isolated child process, on golden
// files and on fresh inputs from GRADER_SEED; benchmark groups against the reference on the same
// GPU; checks of the submission's integrity. Writes Results.md and results.json.
//
//   build/<impl>/bin/grader [--task N]... [--rubric grader/rubric.json] [--out DIR] [--impl NAME]
//       [--timeout S] [--root DIR] [--objects N=a.o,b.o]... [--bin-dir DIR] [--reference-bin-dir DIR] [--perf-only]
//   grader --submissions DIR [--out DIR] [--slurm] | --collect --out DIR      (a whole class: batch_grade.py)
//   grader --help                                                             (every option; parsed by CLI11)
//   make grade [IMPL=skeleton|reference] [TASK=N]
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <map>
#include <random>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cuda/device.h"
#include "grader/isolate.h"
#include "grader/node_window.h"
#include "grader/protected.h"
#include "grader/report.h"
#include "grader/rubric.h"
#include "grader/symbols.h"
#include "grader/tasks.h"
#include "grader/timed.h"
#include "common/remote/runner.h"

#ifndef ATTNLAB_IMPL
#define ATTNLAB_IMPL "unknown"
#endif
#ifndef ATTNLAB_ROOT
#define ATTNLAB_ROOT "."
#endif

namespace {

using namespace grader;

struct Options {
    std::set<int> only;
    std::string rubric = "grader/rubric.json", out = ".", impl = ATTNLAB_IMPL;
    std::string root = ATTNLAB_ROOT;  // the tree whose protected files are checked
    std::string bin_dir, ref_bin_dir = std::string(ATTNLAB_ROOT) + "/build/reference/bin";
    std::map<int, std::vector<std::string>> objects;  // the student's object files per task
    double timeout_s = 0;                              // overrides the rubric's case_timeout_s when > 0
    bool perf_only = false;  // calibration of the speed curve: time a known-correct kernel, skip its cases
    std::string graded_on;   // which GPU of the host graded this run, as a class run on several GPUs names it
    std::string node_window;  // the node's timing window when a class is graded on several GPUs (node_window.h)
    bool no_baselines = false;  // --measure-perf: the submission and the reference only (calibration runs)
    std::string part;           // --part: one bonus part alone (its task's own cases and timing skipped)
};

[[noreturn]] void usage(const std::string& problem) {
    fmt::print(stderr, "grader: {}\n(grader --help lists the options)\n", problem);
    std::exit(2);
}

std::string self_dir() {
    char buf[PATH_MAX] = {0};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string p = n > 0 ? std::string(buf, size_t(n)) : ".";
    return p.substr(0, p.rfind('/'));
}

// --objects N=a.o,b.o: task N's object files (empty names between commas ignored).
void add_objects(Options& o, const std::string& v) {
    const size_t eq = v.find('=');
    int task = 0;
    if (eq == std::string::npos || !CLI::detail::lexical_cast(v.substr(0, eq), task))
        usage("--objects " + v + ": takes N=file.o,file.o (N a task number)");
    for (const auto& f : CLI::detail::split(v.substr(eq + 1), ','))
        if (!f.empty()) o.objects[task].push_back(f);
}

// The command line (CLI11); `grader --help` lists every option. measure_part: --measure-perf's task or part, else "".
Options parse(int argc, char** argv, std::string* measure_part = nullptr) {
    Options o;
    std::vector<int> tasks;
    std::vector<std::string> objects;
    std::string measure;
    std::string batch_dir;
    CLI::App app{"grader — grades every task of the rubric: each case in an isolated child process, on golden files and "
                 "fresh inputs from GRADER_SEED; speed against the reference on the same GPU; the submission's integrity. "
                 "Writes Results.md and results.json.",
                 "grader"};
    app.get_formatter()->column_width(34);
    const std::string grading = "Grading", klass = "A whole class (tools/class/batch_grade.py)",
                      internal = "Run by the grader itself";
    app.add_option("--task", tasks, "grade task N only (repeat for more; its bonus part comes with it); default: every task")
        ->type_name("N")->allow_extra_args(false)->group(grading);
    app.add_option("--rubric", o.rubric, "the rubric: points, speed share and curve, harness names, limits")
        ->type_name("FILE")->capture_default_str()->group(grading);
    app.add_option("--out", o.out, "where Results.md, results.json and logs/ are written")
        ->type_name("DIR")->capture_default_str()->group(grading);
    app.add_option("--impl", o.impl, "the implementation's name in the reports")->type_name("NAME")->capture_default_str()
        ->group(grading);
    app.add_option("--timeout", o.timeout_s, "seconds a case may take, instead of the rubric's case_timeout_s")
        ->type_name("S")->group(grading);
    app.add_option("--root", o.root, "the tree whose protected files (grader/protected.sha256) are checked")
        ->type_name("DIR")->capture_default_str()->group(grading);
    app.add_option("--objects", objects, "task N's object files, for the symbol check against its allow-list (repeatable)")
        ->type_name("N=a.o,b.o")->allow_extra_args(false)->group(grading);
    app.add_option("--bin-dir", o.bin_dir, "where the submission's runners (runner_taskN) are; default: beside this grader")
        ->type_name("DIR")->group(grading);
    app.add_option("--reference-bin-dir", o.ref_bin_dir, "the reference's runners, the yardstick of speed")
        ->type_name("DIR")->capture_default_str()->group(grading);
    app.add_option("--part", o.part, "grade this bonus part alone (e.g. 5b; with --perf-only: time it alone, a calibration "
                   "case of its speed curve)")
        ->type_name("KEY")->group(grading);
    app.add_flag("--perf-only", o.perf_only,
                 "time a known-correct kernel against the reference, no cases (a calibration case of the speed curve)")
        ->group(grading);
    app.add_option("--graded-on", o.graded_on, "which GPU of the host this run had (class grading on several GPUs), "
                   "for the reports")
        ->type_name("TEXT")->group(grading);
    app.add_option("--node-window", o.node_window, "a directory of lock files shared by the graders of one node (class grading "
                   "on several GPUs): each times its tasks alone on the node (grader/node_window.h)")
        ->type_name("DIR")->group(grading);
    app.add_option("--submissions", batch_dir,
                   "grade a whole class: every argument goes to tools/class/batch_grade.py (its --help: --slurm, --index, "
                   "--tasks, --build-only, --grade-only, --gres, …)")
        ->type_name("DIR")->group(klass);
    app.add_flag("--collect", "with --out DIR: merge a Slurm array's results into DIR/gradebook.csv (batch_grade.py)")
        ->group(klass);
    app.add_option("--measure-perf", measure, "the trusted measurement of task N's (or bonus part Nx's) speed, in a child of "
                   "the grader (timed.h)")
        ->type_name("N|Nx")->group(internal);
    app.add_flag("--no-baselines", o.no_baselines, "with --measure-perf: the submission and the reference only")->group(internal);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        fmt::print("{}", app.help());
        std::exit(0);
    } catch (const CLI::ParseError& e) {
        usage(e.what());
    }
    o.only.insert(tasks.begin(), tasks.end());
    for (const auto& v : objects) add_objects(o, v);
    if (measure_part) *measure_part = measure;
    if (o.bin_dir.empty()) o.bin_dir = self_dir();
    setenv("ATTNLAB_RUNNER_DIR", o.bin_dir.c_str(), 1);  // the submission's runners (runner_taskN)
    struct stat st {};
    if (o.root == ATTNLAB_ROOT && stat((o.root + "/grader").c_str(), &st) != 0) o.root = ".";  // a binary that travelled
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

// GRADER_SEED: the instructor's, or a fresh random one, printed so the run can be reproduced.
std::string ensure_seed() {
    const char* env = std::getenv("GRADER_SEED");
    if (env && *env) return env;
    const std::string seed = std::to_string(std::random_device{}() % 1000000000u);
    setenv("GRADER_SEED", seed.c_str(), 1);
    return seed;
}

// Stored reference times (the kit's estimates) sit beside the rubric.
std::string reference_times_path(const Options& opt) {
    const size_t slash = opt.rubric.rfind('/');
    return (slash == std::string::npos ? std::string(".") : opt.rubric.substr(0, slash)) + "/reference_times.json";
}

// "task 4", or "bonus 4b" for a bonus part: how the console names what is being graded.
std::string label(const RubricTask& rt) { return rt.bonus.empty() ? fmt::format("task {}", rt.id) : "bonus " + rt.bonus; }

// The trusted measurement of the task's speed (perf.h), and a line per timed shape.
// With --node-window, alone on the node: no other grader of the class times, runs cases or builds meanwhile.
void time_task(TaskReport& t, const RubricTask& rt, const Rubric& rubric, const Options& opt, const std::string& logs) {
    const NodeWindow alone(opt.node_window, NodeWindow::Mode::timing);
    const std::string part = rt.bonus.empty() ? std::to_string(rt.id) : rt.bonus;  // "5", or the bonus part "5b"
    t.perf = run_performance(rt.perf, part, opt.bin_dir, opt.ref_bin_dir, rubric.bench_timeout_s,
                             fmt::format("{}/task{}-bench.log", logs, part), reference_times_path(opt), !opt.perf_only);
    if (!opt.node_window.empty())
        t.perf.note += fmt::format("{}timed alone on the node (waited {:.1f} s for the other GPUs' work to stop)",
                                   t.perf.note.empty() ? "" : "; ", alone.waited_s());
    for (const auto& r : t.perf.rows)
        fmt::print("  perf {:<28} {:9.3f} ms  reference {:9.3f} ms  {} {}\n", r.name, r.ms, r.ref_ms,
                   rt.perf.share > 0 ? fmt::format("credit {:3.0f}%", 100 * r.credit) : "(shown, not credited)", r.flag);
    if (!t.perf.note.empty()) fmt::print("  perf: {}\n", t.perf.note);
}

void grade_task(TaskReport& t, const TaskDef& def, const RubricTask& rt, const Rubric& rubric, const Options& opt,
                GradeReport& g, const std::string& logs) {
    t.perf_share = rt.perf.share, t.perf_timed = rt.perf.timed;
    // A static check of the student's objects: it needs no GPU, so it runs even where the task cannot.
    const std::string null_runner = attn::remote::null_runner_path(rt.id);
    std::vector<std::string> uncalled;  // of the kernels this part must run on (rubric "requires_calls")
    auto it = opt.objects.find(rt.id);
    if (it == opt.objects.end()) {
        t.note = "symbol check of the objects not run: no --objects given for this task";
    } else {
        std::vector<std::string> own;
        for (const auto& [task, objs] : opt.objects) own.insert(own.end(), objs.begin(), objs.end());
        uncalled = missing_calls(it->second, rt.requires_calls);
        for (const auto& sym : disallowed_symbols(it->second, own, rt.harness, null_runner))
            t.flags.push_back("disallowed symbol (a task may use its own code, the C/C++ and CUDA runtimes, and the "
                              "harness names grader/rubric.json lists for it; it may not replace any of them, nor run code "
                              "outside its calls): " + sym);
    }
    // The program that runs, whatever objects were named: no function of it may stand in for a library's.
    const std::string runner = fmt::format("{}/runner_task{}", opt.bin_dir.empty() ? self_dir() : opt.bin_dir, rt.id);
    if (access(runner.c_str(), R_OK) == 0)
        for (const auto& sym : interposing_definitions(runner, null_runner)) t.flags.push_back("replaces a library function: " + sym);
    if (opt.perf_only) {  // a calibration run (tools/controls/check_controls.py): the kernel's correctness is shown elsewhere
        std::string why;
        if (!attn::has_cuda_device(&why)) {
            t.status = "not run";
            t.note = "no CUDA device (" + why + ")";
            return;
        }
        t.note = "correctness not checked: --perf-only (a calibration run of the speed curve)";
        if (rt.perf.timed) time_task(t, rt, rubric, opt, logs);
        if (!t.perf.gpu.empty()) g.gpu = t.perf.gpu;
        return;
    }
    const auto cases = def.cases();
    const TaskRun run = [&] {
        const NodeWindow work(opt.node_window, NodeWindow::Mode::work);  // beside other GPUs' work, never their timing
        return run_isolated(def, {rubric.case_timeout_s, rubric.memory_limit_mb,
                                  fmt::format("{}/{}.log", logs, rt.bonus.empty() ? fmt::format("task{}", rt.id) : "bonus" + rt.bonus)});
    }();
    if (!run.device.empty()) g.gpu = run.device;
    if (!run.not_run.empty()) {
        if (g.gpu.rfind("none", 0) == 0) g.gpu = "none: " + run.not_run;
        t.status = "not run";
        t.note = run.not_run;
        fmt::print("{}: not run: {}\n", label(rt), run.not_run);
        return;
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        t.cases.push_back({cases[i].name, cases[i].weight, run.results[i]});
        fmt::print("{}\n", attn::case_line(cases[i].name, run.results[i]));
    }
    // A part that passes cases without calling the kernels it is built on did the work some other way (attention on the
    // host, a library): flagged. One that passes none of the cases that need them (a skeleton, an allocator alone) is
    // told what is missing by its cases.
    bool passed_any = false;
    for (size_t i = 0; i < cases.size(); ++i)
        passed_any = passed_any || (run.results[i].status == "passed" &&
                                    (rt.requires_calls_suites.empty() ||
                                     std::count(rt.requires_calls_suites.begin(), rt.requires_calls_suites.end(), cases[i].suite)));
    if (passed_any)
        for (const auto& name : uncalled)
            t.flags.push_back(fmt::format("passes cases but its objects never call {}: this part is graded on your own kernels "
                                          "(grader/rubric.json, \"requires_calls\")", name));
    if (rt.perf.timed) {
        if (!all_cases_passed(t)) {
            t.perf.note = "not measured: a task's speed is timed only when every correctness case passed";
        } else {
            fmt::print("{}: timing the submission and the reference (trusted measurement)\n", label(rt));
            std::fflush(stdout);
            time_task(t, rt, rubric, opt, logs);
        }
    }
}

}  // namespace

// `grader --submissions DIR [--slurm|--collect|…]` grades a whole class: tools/class/batch_grade.py
// builds and grades each submission in its own tree (with this grader's sources) and writes the
// gradebook.
[[noreturn]] void batch(int argc, char** argv) {
    std::string root = ATTNLAB_ROOT;
    struct stat st {};
    if (stat((root + "/tools/class/batch_grade.py").c_str(), &st) != 0) root = ".";
    const std::string script = root + "/tools/class/batch_grade.py";
    std::vector<char*> args = {const_cast<char*>("/usr/bin/python3"), const_cast<char*>(script.c_str())};
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(args[0], args.data());
    usage("cannot run " + script);
}

int main(int argc, char** argv) {
    // A whole class: every argument is batch_grade.py's (--slurm, --index, … are not the grader's own).
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--submissions" || std::string(argv[i]) == "--collect") batch(argc, argv);
    std::string measure_part;
    const Options opt = parse(argc, argv, &measure_part);
    if (!measure_part.empty())  // the grader's own child (perf.cpp)
        return measure_performance(measure_part, opt.bin_dir, opt.ref_bin_dir, !opt.no_baselines);
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

    GradeReport g{rubric.course, opt.impl, now_utc(), hostname(), "none used", ensure_seed(), attn::remote::sandbox_description(),
                  {}, true, {}, {}, opt.graded_on};
    fmt::print("GRADER_SEED={} (fresh inputs; set it to reproduce this run)\n", g.seed);
    g.edited_files = edited_protected_files(opt.root);
    g.edited_scores_zero = rubric.edited_harness_scores_zero;
    if (!g.edited_files.empty()) fmt::print("harness edited: {}\n", fmt::join(g.edited_files, ", "));

    // A task (or a bonus part: its key, e.g. "4b"), graded when the build has it.
    auto grade_one = [&](const RubricTask& rt, const std::vector<TaskDef>& built) {
        TaskReport t;
        t.id = rt.id, t.bonus = rt.bonus, t.title = rt.title, t.points = rt.points, t.status = "graded";
        auto def = std::find_if(built.begin(), built.end(), [&](const TaskDef& d) { return d.id == rt.id && d.bonus == rt.bonus; });
        if (def == built.end()) {
            t.status = "not available";
            t.note = "this part is not in the build yet";
            fmt::print("{}: not available\n", label(rt));
        } else {
            fmt::print("{}: {}\n", label(rt), rt.title);
            std::fflush(stdout);
            grade_task(t, *def, rt, rubric, opt, g, logs);
            score_task(t);
            fmt::print("{}: {:.2f} / {:.0f}{}\n", label(rt), t.score, t.points,
                       t.flags.empty() ? "" : fmt::format("  FLAGGED: {}", fmt::join(t.flags, "; ")));
        }
        return t;
    };
    if (!opt.part.empty() &&
        std::none_of(rubric.bonus.begin(), rubric.bonus.end(), [&](const RubricTask& rt) { return rt.bonus == opt.part; }))
        usage(fmt::format("--part {}: the rubric has no such bonus part", opt.part));
    for (const RubricTask& rt : rubric.tasks)
        if (opt.part.empty() && (opt.only.empty() || opt.only.count(rt.id))) g.tasks.push_back(grade_one(rt, built_tasks()));
    // Bonus parts: graded with their task (--task 4 grades 4b too); in a calibration run (--perf-only) only the one --part
    // names.
    for (const RubricTask& rt : rubric.bonus) {
        const bool chosen = opt.part.empty() ? (opt.only.empty() || opt.only.count(rt.id)) && !opt.perf_only : rt.bonus == opt.part;
        if (chosen) g.bonus.push_back(grade_one(rt, built_bonus_parts()));
    }
    write_results_md(g, opt.out + "/Results.md");
    write_results_json(g, opt.out + "/results.json");
    fmt::print("score {:.2f} / {:.0f}{} — wrote {}/Results.md and results.json\n", total_score(g), max_score(g),
               g.bonus.empty() ? "" : fmt::format(" (bonus {:.2f} apart)", bonus_score(g)), opt.out);
    return 0;
}
