// sandbox.h — how a process that holds student code is started: in bubblewrap where it can run,
// else as an unprivileged uid with resource limits, and the report says which.
//
// bubblewrap view: /usr (toolchain and CUDA libraries) and /sys read-only, a private /proc, /dev
// with only the null devices and the GPU's nodes, a private size-capped /tmp, the program itself
// and the files a task needs (`extra_ro`), read-only; no network, no other process, a clean
// environment (no GRADER_SEED), uid 65534. Not visible: the course tree, reference sources,
// goldens, the output folder, other submissions.
//
// ATTNLAB_SANDBOX=auto (default) | bwrap | uid | none chooses; auto takes the first that works.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace attn::sandbox {

enum class Kind { bwrap, uid, none };

struct Plan {
    Kind kind = Kind::none;
    std::string description;  // for reports: "bubblewrap …", "uid 65534 + rlimits (bubblewrap: why not)"
};

// What this process will use (probed once: bubblewrap is started on /bin/true).
const Plan& plan();

struct Spec {
    std::string program;                // absolute path of the program to run
    std::vector<std::string> args;      // its arguments
    std::vector<std::pair<std::string, std::string>> extra_ro;  // (source, where it is shown), read-only
    std::vector<std::string> extra_rw;  // absolute paths shown writable (class-grading builds only)
    std::string chdir;                  // working directory inside (default /tmp)
    bool network = false;               // never for runners
};

// In a forked child, after its fds are set up: becomes the sandboxed program (never returns; on
// failure writes why to stderr and _exits 127).
[[noreturn]] void exec_in_sandbox(const Spec& spec);

}  // namespace attn::sandbox
