// runner.h — the trusted side's handle on a runner: the separate, sandboxed process that holds the
// student's code (build/<impl>/bin/runner_taskN). Tests and the grader never link student code;
// the task's interface functions they call are proxies (taskN/remote.cpp) that send the inputs
// here, and the runner sends back raw outputs. Every verdict is computed on this side.
//
// One runner per process at a time, started on first use and again after it died. A runner that
// crashes, hangs past the call's time limit or breaks the protocol throws RunnerFailure (the case
// is an error, the next call gets a fresh runner); an exception thrown by the student's code is
// rethrown here with its type (NotImplemented, std::invalid_argument, std::out_of_range, …).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/remote/wire.h"

namespace attn::remote {

struct RunnerFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A fault the runner's harness found in the submission's behaviour (work left on a side stream):
// the case fails with this message.
struct SubmissionFault : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Which runner this process uses (runner_task<N> in ATTNLAB_RUNNER_DIR, default: this program's
// folder). Set once, before the first call.
void use_task(int task);
// Where runner_task<N> is found from now on (ends the current runner): the grader times the
// submission's runner and then the reference's.
void use_runner_dir(const std::string& dir);

// A file the runner may read (read-only), shown at `path` (absolute), e.g. a checkpoint's weights.
// Never goldens' expected outputs.
void allow_read(const std::string& path);

// Sends one request; returns the reply. `expect` (when not empty) is the element count every
// reply buffer must have, in order — anything else is a malformed reply.
Message request(const Message& req, const std::vector<size_t>& expect = {});

// A buffer argument of a proxied call: host or device memory of the caller, n floats.
enum class Role { in, out, inout };
struct Arg {
    float* p;
    size_t n;
    Role role;
    bool device;
};
inline Arg in(const float* p, size_t n) { return {const_cast<float*>(p), n, Role::in, false}; }
inline Arg out(float* p, size_t n) { return {p, n, Role::out, false}; }
inline Arg inout(float* p, size_t n) { return {p, n, Role::inout, false}; }
inline Arg dev_in(const float* p, size_t n) { return {const_cast<float*>(p), n, Role::in, true}; }
inline Arg dev_out(float* p, size_t n) { return {p, n, Role::out, true}; }
inline Arg dev_inout(float* p, size_t n) { return {p, n, Role::inout, true}; }

// Calls `op` in the runner with these buffers and scalars. Inputs travel there; the runner gives
// outputs fresh memory (NaN-poisoned), calls the student's function, waits for the device, and
// every buffer comes back into the caller's memory — inputs too, so a submission that writes to
// its inputs is caught by the usual checks. Two arguments with the same pointer stay one buffer.
void call(const std::string& op, const std::vector<Arg>& args, const nlohmann::json& scalars);

// Ends the runner (the next call starts a fresh one).
void stop_runner();

// The kernels the last request's student call launched, each distinct one once (launch_log.h; diagnostic only, written
// by the runner's process): "" where none was recorded. A timed-out call's error says what it launched last already.
std::string launches_of_last_call();

// The live runner's processes as the kernel reports them (read from /proc, from outside: nothing
// the runner does can change these but doing more). The runner is this process's child, or in
// bubblewrap a descendant of it; every descendant that is not bubblewrap's own counts.
struct ProcessReport {
    double peak_rss_bytes = 0;    // VmHWM summed: its peak resident memory since it started (every way of allocating)
    int threads = 0;              // threads alive now
    uint64_t caught_signals = 0;  // SigCgt: signals with a handler installed
    int processes = 0;            // 0 without a runner
};
ProcessReport runner_process_report();
double runner_peak_rss_bytes();  // runner_process_report().peak_rss_bytes

// The null runners' folder: runner_taskN built from the harness with a submission that does nothing
// (taskN/null_submission.cpp; build/common/null-runners). A submission is measured against the
// same measurement of this trusted program — never against a baseline read from its own process
// after its code ran. $ATTNLAB_NULL_RUNNER_DIR, else null-runners/ beside this program, else the
// build's. Empty when none is found.
std::string null_runner_dir();
std::string null_runner_path(int task);  // its runner_taskN, or empty

// Runs `fn` with a fresh null runner of the current task as "the runner", then ends it; the next
// call gets a fresh runner from the folder used before. Throws RunnerFailure without a null runner.
void with_null_runner(const std::function<void()>& fn);

// How runners are sandboxed in this process (for reports).
std::string sandbox_description();

}  // namespace attn::remote
