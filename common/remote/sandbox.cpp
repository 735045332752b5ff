// sandbox.cpp — see sandbox.h.
#include "common/remote/sandbox.h"

#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace attn::sandbox {
namespace {

constexpr uid_t kNobody = 65534;
const char* const kBwrap = "/usr/bin/bwrap";

bool is_symlink(const char* path) {
    struct stat st {};
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

// The environment a sandboxed program gets: nothing of the caller's (no GRADER_SEED, no paths).
std::vector<std::string> clean_env() {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"};
    for (const char* keep : {"CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING"})
        if (const char* v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
    return env;
}

std::vector<std::string> bwrap_argv(const Spec& s) {
    std::vector<std::string> a = {kBwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"};
    if (s.network) a.push_back("--share-net");
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        if (is_symlink(top)) {
            char target[256] = {0};
            if (readlink(top, target, sizeof target - 1) > 0) a.insert(a.end(), {"--symlink", target, top});
        } else if (exists(top)) {
            a.insert(a.end(), {"--ro-bind", top, top});
        }
    }
    a.insert(a.end(), {"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/alternatives",
                       "/etc/alternatives", "--ro-bind-try", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"});
    // The GPU's nodes. A class graded on several GPUs names each worker's own (ATTNLAB_GPU_NODE=/dev/nvidiaN,
    // tools/class/gpus.py): the other GPUs' nodes are left out, so a runner that rewrites CUDA_VISIBLE_DEVICES
    // still reaches only its worker's GPU. The control nodes (nvidiactl, nvidia-uvm, …) are bound either way.
    const char* own_gpu = std::getenv("ATTNLAB_GPU_NODE");
    glob_t g{};
    if (glob("/dev/nvidia*", 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) {
            const char* node = g.gl_pathv[i];
            const char* number = node + sizeof("/dev/nvidia") - 1;  // "0" of /dev/nvidia0; "ctl" of /dev/nvidiactl
            const bool numbered = *number && std::strspn(number, "0123456789") == std::strlen(number);
            if (own_gpu && *own_gpu && numbered && std::strcmp(node, own_gpu) != 0) continue;
            a.insert(a.end(), {"--dev-bind", node, node});
        }
    globfree(&g);
    a.insert(a.end(), {"--size", std::to_string(16u << 20), "--tmpfs", "/tmp"});  // small: no room to park an S×S matrix
    for (const auto& p : s.extra_rw) a.insert(a.end(), {"--bind", p, p});
    for (const auto& [src, dest] : s.extra_ro) a.insert(a.end(), {"--ro-bind", src, dest});
    // the program is shown at /sandbox/<name>: no path of the course tree exists inside
    const std::string inside = "/sandbox/" + s.program.substr(s.program.rfind('/') + 1);
    a.insert(a.end(), {"--ro-bind", s.program, inside, "--remount-ro", "/", "--chdir", s.chdir.empty() ? "/tmp" : s.chdir,
                       "--clearenv"});
    for (const auto& kv : clean_env()) {
        const size_t eq = kv.find('=');
        a.insert(a.end(), {"--setenv", kv.substr(0, eq), kv.substr(eq + 1)});
    }
    a.insert(a.end(), {"--uid", std::to_string(kNobody), "--gid", std::to_string(kNobody), "--", inside});
    a.insert(a.end(), s.args.begin(), s.args.end());
    return a;
}

[[noreturn]] void exec_argv(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    std::vector<char*> args, envp;
    for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    for (const auto& s : env) envp.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr), envp.push_back(nullptr);
    execve(args[0], args.data(), envp.data());
    std::fprintf(stderr, "sandbox: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
}

void limit(int resource, rlim_t value) {
    rlimit r{value, value};
    setrlimit(resource, &r);
}

// Does bubblewrap start here (user namespaces allowed)? Runs it once on /bin/true.
std::string bwrap_problem() {
    if (access(kBwrap, X_OK) != 0) return "bwrap is not installed (Debian package bubblewrap)";
    const pid_t pid = fork();
    if (pid == 0) {
        const int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO), dup2(devnull, STDERR_FILENO);
        Spec s;
        s.program = "/usr/bin/true";
        exec_argv(bwrap_argv(s), clean_env());
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return "cannot fork";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    return "bwrap cannot start here (no unprivileged user namespaces?)";
}

Plan make_plan() {
    const char* want_env = std::getenv("ATTNLAB_SANDBOX");
    const std::string want = want_env && *want_env ? want_env : "auto";
    if (want == "none") return {Kind::none, "none (ATTNLAB_SANDBOX=none): student code runs as this user"};
    std::string why_not_bwrap;
    if (want == "auto" || want == "bwrap") {
        why_not_bwrap = bwrap_problem();
        if (why_not_bwrap.empty())
            return {Kind::bwrap, "bubblewrap: read-only /usr, private /tmp and /proc, GPU nodes only, no network, uid 65534"};
    }
    if (geteuid() == 0)
        return {Kind::uid, "uid 65534 + rlimits, private working folder" +
                               (why_not_bwrap.empty() ? std::string() : " (bubblewrap: " + why_not_bwrap + ")")};
    return {Kind::none, "none: rlimits only, student code runs as this user" +
                            (why_not_bwrap.empty() ? std::string() : " (bubblewrap: " + why_not_bwrap + ")")};
}

}  // namespace

const Plan& plan() {
    static const Plan p = make_plan();
    return p;
}

void exec_in_sandbox(const Spec& spec) {
    limit(RLIMIT_CORE, 0);
    // Also what a runner can write to its log (opened for appending, one per task): a runner that prints without end
    // is stopped at 64 MB (SIGXFSZ) — a class of such submissions costs 64 MB a task each, not a disk.
    limit(RLIMIT_FSIZE, rlim_t(64) << 20);
    switch (plan().kind) {
        case Kind::bwrap:
            exec_argv(bwrap_argv(spec), clean_env());
        case Kind::uid: {
            char dir[] = "/tmp/attnlab-sandbox-XXXXXX";
            if (!mkdtemp(dir) || chown(dir, kNobody, kNobody) != 0 || chdir(dir) != 0) {
                std::fprintf(stderr, "sandbox: cannot make a private working folder: %s\n", std::strerror(errno));
                _exit(127);
            }
            limit(RLIMIT_NOFILE, 1024);
            if (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
                setresuid(kNobody, kNobody, kNobody) != 0) {
                std::fprintf(stderr, "sandbox: cannot become uid %u: %s\n", kNobody, std::strerror(errno));
                _exit(127);
            }
            break;
        }
        case Kind::none:
            break;
    }
    std::vector<std::string> argv = {spec.program};
    argv.insert(argv.end(), spec.args.begin(), spec.args.end());
    exec_argv(argv, clean_env());
}

}  // namespace attn::sandbox
