// isolate.cpp — see isolate.h.
#include "grader/isolate.h"

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/remote/runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace grader {
namespace {

using attn::CaseResult;
using Clock = std::chrono::steady_clock;

nlohmann::json to_json(const CaseResult& r) {
    return {{"status", r.status}, {"reason", r.reason},   {"detail", r.detail},    {"shape", r.shape},
            {"max_abs_err", r.max_abs_err}, {"tol_share", r.tol_share}, {"nonfinite_output", r.nonfinite_output}, {"ms", r.ms}, {"metrics", r.metrics}, {"output", r.output}};
}

CaseResult from_json(const nlohmann::json& j) {
    CaseResult r;
    r.status = j.at("status");
    r.reason = j.at("reason");
    r.detail = j.at("detail");
    r.shape = j.at("shape");
    r.max_abs_err = j.at("max_abs_err");
    r.tol_share = j.at("tol_share");
    r.nonfinite_output = j.value("nonfinite_output", false);
    r.ms = j.at("ms");
    r.metrics = j.at("metrics").get<std::map<std::string, double>>();
    r.output = j.value("output", "");
    return r;
}

void write_all(int fd, const std::string& s) {
    for (size_t off = 0; off < s.size();) {
        ssize_t n = write(fd, s.data() + off, s.size() - off);
        if (n <= 0) _exit(3);
        off += size_t(n);
    }
}

// A child in its own process group (so a time limit can kill all it started) that dies with the
// grader, whatever ends the grader.
void become_child() {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

[[noreturn]] void child_main(const TaskDef& task, size_t first, int fd, const IsolationLimits& limits) {
    become_child();
    if (!limits.log_path.empty()) {
        int log = open(limits.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (log >= 0) {
            dup2(log, STDOUT_FILENO);
            dup2(log, STDERR_FILENO);
            close(log);
        }
    }
    if (limits.memory_limit_mb > 0 && !task.needs_gpu) {
        rlimit lim{rlim_t(limits.memory_limit_mb) << 20, rlim_t(limits.memory_limit_mb) << 20};
        setrlimit(RLIMIT_AS, &lim);
    }
    if (task.needs_gpu) {
        std::string why;
        if (!attn::has_cuda_device(&why)) {
            write_all(fd, fmt::format("N no CUDA device ({})\n", why));
            _exit(0);
        }
        write_all(fd, fmt::format("D {}\n", attn::device_info().name));
    }
    attn::remote::use_task(task.id);
    const auto cases = task.cases();
    for (size_t i = first; i < cases.size(); ++i) {
        write_all(fd, fmt::format("S {}\n", i));
        const CaseResult r = attn::run_case(cases[i]);
        write_all(fd, fmt::format("R {} {}\n", i, to_json(r).dump()));
        if (attn::cuda_context_poisoned()) break;  // this context is dead: a fresh child goes on
    }
    fflush(stdout);
    _exit(0);
}

// A pipe, then fork(): in the child fds[1] is the write end, in the parent fds[0] the read end.
pid_t fork_with_pipe(int fds[2]) {
    if (pipe(fds) != 0) throw std::runtime_error("pipe() failed");
    fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork() failed");
    return pid;
}

Clock::time_point after(double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Reads `fd` until EOF, handing each chunk to on_data; if `deadline` (which on_data may move)
// passes first, kills the child's process group and returns true.
bool read_until_deadline(int fd, pid_t pid, Clock::time_point& deadline, const std::function<void(const char*, size_t)>& on_data) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            return true;
        }
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, int(std::min<long long>(left, 1000))) <= 0) continue;
        char chunk[65536];
        const ssize_t got = read(fd, chunk, sizeof chunk);
        if (got <= 0) return false;  // EOF: the child is gone
        on_data(chunk, size_t(got));
    }
}

std::string death_reason(int status, bool timed_out, double timeout_s) {
    if (timed_out) return fmt::format("timed out after {:.0f} s (hang or far too slow); the child was killed", timeout_s);
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* abbrev = sigabbrev_np(sig);
        return fmt::format("crashed: SIG{} ({})", abbrev ? abbrev : "?", strsignal(sig));
    }
    if (WIFEXITED(status)) return fmt::format("the process exited with code {} in the middle of the case", WEXITSTATUS(status));
    return "the process ended abnormally";
}

}  // namespace

TaskRun run_isolated(const TaskDef& task, const IsolationLimits& limits) {
    const size_t n = task.cases().size();
    TaskRun run;
    run.results.resize(n);
    size_t next = 0;
    while (next < n) {
        int fds[2];
        const pid_t pid = fork_with_pipe(fds);
        if (pid == 0) {
            close(fds[0]);
            child_main(task, next, fds[1], limits);
        }
        close(fds[1]);

        long current = -1;     // the case the child is in
        bool started = false;  // did this child start any case?
        std::string buf;
        Clock::time_point deadline = after(limits.case_timeout_s);
        const bool timed_out = read_until_deadline(fds[0], pid, deadline, [&](const char* chunk, size_t got) {
            buf.append(chunk, got);
            for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1)) {
                const std::string line = buf.substr(0, nl);
                if (line[0] == 'N') {
                    run.not_run = line.substr(2);
                } else if (line[0] == 'D') {
                    run.device = line.substr(2);
                } else if (line[0] == 'S') {
                    current = long(std::stoul(line.substr(2)));
                    started = true;
                    deadline = after(limits.case_timeout_s);
                } else if (line[0] == 'R') {
                    const size_t idx = std::stoul(line.substr(2));
                    if (idx < n) run.results[idx] = from_json(nlohmann::json::parse(line.substr(line.find(' ', 2) + 1)));
                    current = -1;
                    next = idx + 1;
                }
            }
        });
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!run.not_run.empty() || next >= n) break;
        // Between cases, after a poisoned context: a fresh child simply goes on.
        if (current < 0 && started && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        // The child died inside case `current` (or before it started one): record it, go on.
        const size_t failed = current >= 0 ? size_t(current) : next;
        run.results[failed].status = "error";
        run.results[failed].reason = death_reason(status, timed_out, limits.case_timeout_s);
        next = failed + 1;
    }
    return run;
}

ProgramRun run_program(const std::vector<std::string>& argv, double timeout_s, const std::string& log_path) {
    ProgramRun run;
    int fds[2];
    const pid_t pid = fork_with_pipe(fds);
    if (pid == 0) {
        become_child();
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]), close(fds[1]);
        const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (log >= 0) dup2(log, STDERR_FILENO), close(log);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        fprintf(stderr, "cannot run %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    Clock::time_point deadline = after(timeout_s);
    const bool timed_out =
        read_until_deadline(fds[0], pid, deadline, [&](const char* chunk, size_t got) { run.out.append(chunk, got); });
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        run.failure = timed_out || WIFSIGNALED(status) ? death_reason(status, timed_out, timeout_s)
                                                       : fmt::format("exited with code {}", WEXITSTATUS(status));
    return run;
}

}  // namespace grader
