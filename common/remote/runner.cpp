// runner.cpp — see runner.h.
#include "common/remote/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <climits>
#include <fstream>
#include <map>
#include <sstream>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/cuda/cuda_error.h"
#include "common/remote/device_copy.h"
#include "common/remote/launch_log.h"
#include "common/golden.h"
#include "common/remote/sandbox.h"
#include "common/todo.h"

#ifndef ATTNLAB_ROOT
#define ATTNLAB_ROOT "."
#endif

namespace attn::remote {
namespace {

struct State {
    int task = 0;
    std::string dir;  // empty: ATTNLAB_RUNNER_DIR, else this program's folder
    std::vector<std::pair<std::string, std::string>> readable;  // (source, shown at)
    pid_t pid = -1;
    int to_runner = -1, from_runner = -1;
};

State& state() {
    static State s;
    return s;
}

std::string self_dir() {
    char buf[PATH_MAX] = {0};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    const std::string self = n > 0 ? std::string(buf, size_t(n)) : "./x";
    return self.substr(0, self.rfind('/'));
}

std::string runner_dir() {
    if (const char* d = std::getenv("ATTNLAB_RUNNER_DIR"); d && *d) return d;
    return self_dir();
}

double call_timeout_s() {
    const char* t = std::getenv("ATTNLAB_CALL_TIMEOUT_S");
    return t && *t ? std::atof(t) : 900.0;
}

std::string death_reason(int status) {
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    // bubblewrap's init reports a child killed by a signal as exit code 128 + the signal
    if (!sig && WIFEXITED(status) && WEXITSTATUS(status) > 128 && sandbox::plan().kind == sandbox::Kind::bwrap)
        sig = WEXITSTATUS(status) - 128;
    if (sig) {
        const char* abbrev = sigabbrev_np(sig);
        return fmt::format("crashed: SIG{} ({})", abbrev ? abbrev : "?", strsignal(sig));
    }
    if (WIFEXITED(status)) return fmt::format("the runner exited with code {} in the middle of the call", WEXITSTATUS(status));
    return "the runner ended abnormally";
}

// Kills the runner (if any) and returns how it ended; `usage` gets its resources.
int reap(bool kill_it, rusage* usage = nullptr) {
    State& s = state();
    if (s.pid <= 0) return 0;
    if (s.to_runner >= 0) close(s.to_runner);
    if (kill_it) kill(s.pid, SIGKILL);
    int status = 0;
    rusage ru{};
    // A runner told to end gets 5 s to do so; then it is killed.
    for (int waited_ms = 0;; waited_ms += 10) {
        if (waited_ms == 5000) kill(s.pid, SIGKILL);
        const pid_t got = wait4(s.pid, &status, waited_ms >= 5000 ? 0 : WNOHANG, &ru);
        if (got == s.pid || (got < 0 && errno != EINTR)) break;
        if (waited_ms < 5000) usleep(10000);
    }
    if (usage) *usage = ru;
    if (s.from_runner >= 0) close(s.from_runner);
    s = State{s.task, s.dir, s.readable};
    return status;
}

// "flash_attention_forward(B=2, H=3, Sq=129, …)": the call a runner died in, its scalar arguments only.
std::string call_text(const Message& req) {
    std::vector<std::string> args;
    if (const auto it = req.head.find("args"); it != req.head.end() && it->is_object())
        for (const auto& [key, value] : it->items())
            if (value.is_primitive()) args.push_back(key + "=" + value.dump());
    return fmt::format("{}({})", req.head.value("op", std::string("?")), fmt::join(args, ", "));
}

// The runner died, hung or broke the protocol: it is ended, and the call fails saying which, and in which call
// (what the student's code printed before it is in the runner's output: the terminal, or the task's log).
[[noreturn]] void fail_after_death(const std::string& what, bool timed_out, const std::string& call) {
    const double t = call_timeout_s();
    State& s = state();
    bool died = false;  // by itself (a crash, an exit): say how; else it broke the protocol: say that
    for (int i = 0; i < 100 && !timed_out; ++i) {  // a runner that closed its channel gets 1 s to be gone
        siginfo_t info{};
        if (waitid(P_PID, id_t(s.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == s.pid) {
            died = true;
            break;
        }
        usleep(10000);
    }
    const int status = reap(true);
    if (timed_out) {
        const std::string launches = launch_log::describe_current();
        throw RunnerFailure(fmt::format("timed out after {:.0f} s (hang or far too slow) in {}; the runner was killed{}", t, call,
                                        launches.empty() ? "" : ". " + launches));
    }
    if (died && (WIFSIGNALED(status) || WIFEXITED(status))) throw RunnerFailure(fmt::format("{} in {}", death_reason(status), call));
    throw RunnerFailure(fmt::format("{} (in {})", what, call));
}

void start() {
    State& s = state();
    if (s.task <= 0) throw std::logic_error("attn::remote: no task chosen (use_task) before the first call");
    sandbox::Spec spec;
    spec.program = fmt::format("{}/runner_task{}", s.dir.empty() ? runner_dir() : s.dir, s.task);
    spec.extra_ro = s.readable;
    // Task 4's tile tuning, which the student's Task-4 launcher (and Tasks 5–7 through it) reads
    char tuning[PATH_MAX];
    const std::string tuning_path = repo_path("ATTNLAB_TASK4_TUNING", "task4/tuning.json");
    if (tuning_path[0] == '/' && realpath(tuning_path.c_str(), tuning)) spec.extra_ro.emplace_back(tuning, tuning_path);
    if (access(spec.program.c_str(), X_OK) != 0)
        throw RunnerFailure(fmt::format("no runner at {} (build it: make build/<impl>/bin/runner_task{})", spec.program, s.task));
    sandbox::plan();  // probed before forking
    int req[2], rep[2];
    if (pipe2(req, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0) throw RunnerFailure("pipe() failed");
    const char* log_env = std::getenv("ATTNLAB_LAUNCH_LOG");
    const int page = log_env && std::string(log_env) == "0" ? -1 : launch_log::create_page();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw RunnerFailure("fork() failed");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // the runner never outlives the process that judges it
        setsid();                          // its own session: kill(0, …) reaches no one else
        const int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, STDIN_FILENO);
        // Its output goes where this process's errors go (a terminal, or the task's log), never to
        // this process's stdout, which may be a channel (grader --measure-perf prints its result there).
        dup2(STDERR_FILENO, STDOUT_FILENO);
        // The channel: requests on fd 3, replies on fd 4 (dup2 clears close-on-exec).
        const int r = fcntl(req[0], F_DUPFD, 10), w = fcntl(rep[1], F_DUPFD, 10);
        const int p = page >= 0 ? fcntl(page, F_DUPFD, 10) : -1;
        dup2(r, 3), dup2(w, 4);
        if (p >= 0) dup2(p, launch_log::kFd);  // the launch log's page (launch_log.h)
        else close(launch_log::kFd);
        close_range(launch_log::kFd + 1, ~0u, 0);  // nothing else of this process (a grader's result pipe) reaches the runner
        sandbox::exec_in_sandbox(spec);
    }
    close(req[0]), close(rep[1]);
    signal(SIGPIPE, SIG_IGN);
    s.pid = pid, s.to_runner = req[1], s.from_runner = rep[0];
}

[[noreturn]] void rethrow(const nlohmann::json& err) {
    const std::string type = err.value("type", "other");
    std::string what = sanitize(err.value("what", "?"));
    // a CUDA error (an illegal address, a launch the GPU refused): which kernel the call launched last (launch_log.h)
    if (const std::string launches = type == "cuda" ? launch_log::describe_current(false) : ""; !launches.empty())
        what += ". " + launches;
    const std::string suffix = " not implemented";
    if (type == "not_implemented")
        throw NotImplemented(what.size() > suffix.size() && what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0
                                 ? what.substr(0, what.size() - suffix.size())
                                 : what);
    if (type == "invalid_argument") throw std::invalid_argument(what);
    if (type == "out_of_range") throw std::out_of_range(what);
    if (type == "logic_error") throw std::logic_error(what);
    if (type == "cuda") throw CudaError(what);
    if (type == "fault") throw SubmissionFault(what);
    throw std::runtime_error("the submission threw: " + what);
}

}  // namespace

void use_task(int task) { state().task = task; }

void use_runner_dir(const std::string& dir) {
    if (state().dir == dir) return;
    reap(true);
    state().dir = dir;
}

void allow_read(const std::string& path) {
    char real[PATH_MAX];
    if (!realpath(path.c_str(), real)) return;  // missing: the runner reports it when it tries
    for (const auto& p : state().readable)
        if (p.second == path) return;
    reap(true);  // the sandbox's view is fixed when the runner starts
    state().readable.emplace_back(real, path);
}

Message request(const Message& req, const std::vector<size_t>& expect) {
    State& s = state();
    if (s.pid <= 0) start();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(call_timeout_s()));
    Message reply;
    launch_log::reset_page();
    try {
        write_message(s.to_runner, req);
        ReadLimits limits;
        if (!expect.empty()) {
            limits.max_buffers = expect.size();
            limits.max_total_floats = 0;
            for (size_t n : expect) limits.max_total_floats += n;
        }
        reply = read_message(s.from_runner, deadline, limits);
    } catch (const WireError& e) {
        fail_after_death(std::string("the runner broke the protocol: ") + e.what(), std::string(e.what()) == "timed out",
                         call_text(req));
    }
    if (reply.head.contains("error")) {
        const nlohmann::json err = reply.head["error"];
        if (reply.head.value("exiting", false)) reap(false);  // its CUDA context is dead: a fresh one next time
        if (!err.is_object()) fail_after_death("the runner sent a malformed error", false, call_text(req));
        rethrow(err);
    }
    if (!expect.empty()) {
        bool ok = reply.buffers.size() == expect.size();
        for (size_t i = 0; ok && i < expect.size(); ++i) ok = reply.buffers[i].size() == expect[i];
        if (!ok) fail_after_death("the runner's reply has the wrong buffers", false, call_text(req));
    }
    return reply;
}

void call(const std::string& op, const std::vector<Arg>& args, const nlohmann::json& scalars) {
    Message req;
    req.head = {{"op", op}, {"args", scalars}, {"bufs", nlohmann::json::array()}};
    std::vector<size_t> expect;
    for (size_t i = 0; i < args.size(); ++i) {
        const Arg& a = args[i];
        int alias = -1;
        for (size_t j = 0; j < i; ++j)
            if (args[j].p == a.p && a.p) alias = int(j);
        req.head["bufs"].push_back({{"role", a.role == Role::in ? "in" : a.role == Role::out ? "out" : "inout"},
                                    {"device", a.device}, {"n", a.n}, {"alias", alias}});
        std::vector<float> data;
        if (alias < 0 && a.role != Role::out) {
            data.resize(a.n);
            if (a.device) copy_device_to_host(data.data(), a.p, a.n);
            else std::memcpy(data.data(), a.p, a.n * sizeof(float));
        }
        req.buffers.push_back(std::move(data));
        expect.push_back(alias < 0 ? a.n : 0);
    }
    const Message reply = request(req, expect);
    for (size_t i = 0; i < args.size(); ++i) {
        const Arg& a = args[i];
        if (reply.buffers[i].empty()) continue;  // an alias of an earlier argument
        if (a.device) copy_host_to_device(a.p, reply.buffers[i].data(), a.n);
        else std::memcpy(a.p, reply.buffers[i].data(), a.n * sizeof(float));
    }
}

void stop_runner() { reap(true); }

std::string launches_of_last_call() { return launch_log::list_current(); }

namespace {

// Every process below `root` (from /proc's parent links).
std::vector<pid_t> descendants(pid_t root) {
    std::map<pid_t, std::vector<pid_t>> children;
    if (DIR* d = opendir("/proc")) {
        while (dirent* e = readdir(d)) {
            const pid_t pid = pid_t(std::atoi(e->d_name));
            if (pid <= 0) continue;
            std::ifstream stat(fmt::format("/proc/{}/stat", pid));
            std::string line;
            std::getline(stat, line);
            const size_t close_paren = line.rfind(')');
            if (close_paren == std::string::npos) continue;
            std::istringstream rest(line.substr(close_paren + 2));
            char state_char;
            pid_t ppid = 0;
            rest >> state_char >> ppid;
            children[ppid].push_back(pid);
        }
        closedir(d);
    }
    std::vector<pid_t> out, todo = {root};
    while (!todo.empty()) {
        const pid_t pid = todo.back();
        todo.pop_back();
        out.push_back(pid);
        for (pid_t c : children[pid]) todo.push_back(c);
    }
    return out;
}

// bubblewrap's own processes (its monitor and its init) are not the runner. By the program file
// (/proc/PID/exe), which a process cannot change without exec; by name where that is unreadable.
bool is_sandbox_process(pid_t pid) {
    char buf[PATH_MAX] = {0};
    const ssize_t n = readlink(fmt::format("/proc/{}/exe", pid).c_str(), buf, sizeof buf - 1);
    if (n > 0) return std::string(buf, size_t(n)) == "/usr/bin/bwrap";
    std::ifstream comm(fmt::format("/proc/{}/comm", pid));
    std::string c;
    std::getline(comm, c);
    return c == "bwrap";
}

}  // namespace

ProcessReport runner_process_report() {
    ProcessReport r;
    const pid_t root = state().pid;
    if (root <= 0) return r;
    for (pid_t pid : descendants(root)) {
        if (is_sandbox_process(pid)) continue;
        std::ifstream status(fmt::format("/proc/{}/status", pid));
        bool seen = false;
        for (std::string line; std::getline(status, line);) {
            seen = true;
            if (line.rfind("VmHWM:", 0) == 0) r.peak_rss_bytes += std::atof(line.c_str() + 6) * 1024.0;  // kB
            else if (line.rfind("Threads:", 0) == 0) r.threads += std::atoi(line.c_str() + 8);
            else if (line.rfind("SigCgt:", 0) == 0) r.caught_signals |= std::strtoull(line.c_str() + 7, nullptr, 16);
        }
        r.processes += seen;
    }
    return r;
}

double runner_peak_rss_bytes() { return runner_process_report().peak_rss_bytes; }

std::string null_runner_path(int task) {
    std::vector<std::string> candidates;
    if (const char* d = std::getenv("ATTNLAB_NULL_RUNNER_DIR"); d && *d) candidates.push_back(d);
    candidates.push_back(self_dir() + "/null-runners");
    candidates.push_back(std::string(ATTNLAB_ROOT) + "/build/common/null-runners");
    for (const auto& dir : candidates) {
        const std::string path = fmt::format("{}/runner_task{}", dir, task);
        if (access(path.c_str(), X_OK) == 0) return path;
    }
    return "";
}

std::string null_runner_dir() {
    const std::string path = null_runner_path(state().task);
    return path.empty() ? path : path.substr(0, path.rfind('/'));
}

void with_null_runner(const std::function<void()>& fn) {
    const std::string dir = null_runner_dir(), before = state().dir;
    if (dir.empty())
        throw RunnerFailure(fmt::format("no null runner for task {} (build it: make build/common/null-runners/runner_task{})",
                                        state().task, state().task));
    auto switch_to = [](const std::string& d) {  // always a fresh runner
        reap(true);
        state().dir = d;
    };
    switch_to(dir);
    try {
        fn();
    } catch (...) {
        switch_to(before);
        throw;
    }
    switch_to(before);
}

std::string sandbox_description() { return sandbox::plan().description; }

}  // namespace attn::remote
