// symbols.cpp — see symbols.h. Uses binutils' nm (no shell: the object paths go to execvp).
#include "grader/symbols.h"

#include <cxxabi.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>

namespace grader {
namespace {

// nm's output lines for `args` (empty on failure; `ok` says whether nm ran cleanly).
std::vector<std::string> nm(const std::vector<std::string>& args, bool* ok = nullptr) {
    int fds[2];
    std::vector<std::string> lines;
    if (pipe(fds) != 0) return lines;
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]), close(fds[1]);
        std::vector<char*> argv = {const_cast<char*>("nm")};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execvp("nm", argv.data());
        _exit(127);
    }
    close(fds[1]);
    FILE* f = fdopen(fds[0], "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        lines.push_back(s);
    }
    if (f) fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    if (ok) *ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return lines;
}

std::string last_word(const std::string& line) {
    const size_t sp = line.find_last_of(' ');
    std::string w = sp == std::string::npos ? line : line.substr(sp + 1);
    const size_t at = w.find('@');  // versioned names: memcpy@GLIBC_2.14
    return at == std::string::npos ? w : w.substr(0, at);
}

std::string demangle(const std::string& s) {
    int status = 0;
    char* d = abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status);
    const std::string out = status == 0 && d ? d : s;
    std::free(d);
    return out;
}

std::string library(const char* name) {
    for (const char* dir : {"/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/", "/lib64/", "/usr/lib64/", "/usr/local/cuda/lib64/"}) {
        const std::string p = std::string(dir) + name;
        if (access(p.c_str(), R_OK) == 0) return p;
    }
    return "";
}

const std::set<std::string>& runtime_exports() {
    static const std::set<std::string> names = [] {
        std::set<std::string> s;
        for (const char* lib : {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libcudart.so"}) {
            const std::string path = library(lib);
            if (path.empty()) continue;
            for (const auto& line : nm({"-D", "--defined-only", path})) s.insert(last_word(line));
        }
        return s;
    }();
    return names;
}

// The runtime's exports a kernel task has no business with: the loader, processes, signals.
bool denied(const std::string& sym) {
    static const char* const prefixes[] = {"dl", "fork", "vfork", "clone", "exec", "system", "popen", "posix_spawn",
                                           "ptrace", "syscall", "kill", "pthread_atfork", "__libc_dl"};
    for (const char* p : prefixes)
        if (sym.rfind(p, 0) == 0) return true;
    return false;
}

bool compiler_glue(const std::string& sym) {
    // (atexit and the stat family live in libc_nonshared.a, not in libc.so.6's exports)
    static const std::set<std::string> nonshared = {"atexit", "at_quick_exit", "stat", "fstat", "lstat", "stat64", "fstat64", "lstat64"};
    return nonshared.count(sym) || sym.rfind("__cuda", 0) == 0 || sym.rfind("__nv", 0) == 0 || sym == "_GLOBAL_OFFSET_TABLE_" || sym == "__dso_handle" ||
           sym.rfind("__fatbinwrap", 0) == 0;
}

}  // namespace

std::vector<std::string> disallowed_symbols(const std::vector<std::string>& objects, const std::vector<std::string>& own,
                                            const std::vector<std::string>& harness_prefixes) {
    std::set<std::string> defined;
    for (const auto& o : own)
        for (const auto& line : nm({"--defined-only", o})) defined.insert(last_word(line));
    std::vector<std::string> found;
    for (const auto& obj : objects) {
        bool ok = false;
        const auto lines = nm({"--undefined-only", obj}, &ok);
        if (!ok) {
            found.push_back(fmt::format("{}: cannot be read by nm", obj));
            continue;
        }
        for (const auto& line : lines) {
            const std::string sym = last_word(line);
            if (sym.empty()) continue;
            const std::string name = demangle(sym);
            if (denied(name)) {
                found.push_back(fmt::format("{}: {} (the loader and process control are not allowed)", obj, name));
                continue;
            }
            if (defined.count(sym) || compiler_glue(sym) || runtime_exports().count(sym)) continue;
            bool harness = false;
            for (const auto& p : harness_prefixes) harness = harness || name.rfind(p, 0) == 0;
            if (!harness) found.push_back(fmt::format("{}: {} (not on this task's list of allowed names)", obj, name));
        }
    }
    return found;
}

}  // namespace grader
