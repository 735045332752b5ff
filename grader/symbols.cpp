// symbols.cpp — see symbols.h. Uses binutils (nm, readelf, objdump) with no shell: the object
// paths go to execvp.
#include "grader/symbols.h"

#include <algorithm>
#include <cxxabi.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace grader {
namespace {

// The output lines of `program args…` (empty on failure; `ok` says whether it ran cleanly).
std::vector<std::string> tool_lines(const char* program, const std::vector<std::string>& args, bool* ok = nullptr) {
    int fds[2];
    std::vector<std::string> lines;
    if (ok) *ok = false;
    if (pipe(fds) != 0) return lines;
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]), close(fds[1]);
        std::vector<char*> argv = {const_cast<char*>(program)};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execvp(program, argv.data());
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

std::vector<std::string> nm(const std::vector<std::string>& args, bool* ok = nullptr) { return tool_lines("nm", args, ok); }

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    return w;
}

std::string strip_version(std::string w) {
    const size_t at = w.find('@');  // versioned names: memcpy@GLIBC_2.14
    return at == std::string::npos ? w : w.substr(0, at);
}

std::string last_word(const std::string& line) {
    const size_t sp = line.find_last_of(' ');
    return strip_version(sp == std::string::npos ? line : line.substr(sp + 1));
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

// name → which runtime library exports it
const std::map<std::string, std::string>& runtime_exports() {
    static const std::map<std::string, std::string> names = [] {
        std::map<std::string, std::string> s;
        for (const char* lib : {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libcudart.so", "libcublas.so"}) {
            const std::string path = library(lib);
            if (path.empty()) continue;
            for (const auto& line : nm({"-D", "--defined-only", path})) s.emplace(last_word(line), lib);
        }
        return s;
    }();
    return names;
}

// Runtime exports a kernel has no business with, by the demangled name's start; and why.
const char* denied(const std::string& sym) {
    struct Rule {
        std::vector<const char*> prefixes;
        const char* why;
    };
    static const std::vector<Rule> rules = {
        {{"dl", "__libc_dl", "fork", "vfork", "clone", "exec", "system", "popen", "posix_spawn", "ptrace", "syscall", "kill",
          "pthread_atfork"},
         "the loader and process control are not allowed"},
        {{"mprotect", "pkey_", "mmap", "mremap", "process_vm_", "prctl", "arch_prctl", "personality"},
         "memory protection, mappings and process attributes are not allowed: a submission may not change its own process"},
        {{"signal", "sigaction", "sigset", "sigvec", "bsd_signal", "sysv_signal", "__sysv_signal", "timer_", "setitimer",
          "alarm", "ualarm"},
         "signal handlers and timers are not allowed: they run code outside the call"},
        {{"open", "__open", "fopen", "freopen", "creat", "opendir", "fdopendir", "std::basic_filebuf", "std::basic_ifstream",
          "std::basic_ofstream", "std::basic_fstream", "std::filesystem::", "std::__fs::filesystem::"},
         "opening files is not allowed: a kernel reads its inputs from its arguments"},
        {{"cudaLaunchHostFunc", "cudaStreamAddCallback", "cuLaunchHostFunc", "cuStreamAddCallback"},
         "host callbacks on a stream are not allowed: they run code outside the call"},
    };
    for (const auto& r : rules)
        for (const char* p : r.prefixes)
            if (sym.rfind(p, 0) == 0) return r.why;
    return nullptr;
}

bool compiler_glue(const std::string& sym) {
    // (atexit and the stat family live in libc_nonshared.a, not in libc.so.6's exports)
    static const std::set<std::string> nonshared = {"atexit", "at_quick_exit", "stat", "fstat", "lstat", "stat64", "fstat64", "lstat64"};
    return nonshared.count(sym) || sym.rfind("__cuda", 0) == 0 || sym.rfind("__nv", 0) == 0 || sym == "_GLOBAL_OFFSET_TABLE_" || sym == "__dso_handle" ||
           sym.rfind("__fatbinwrap", 0) == 0;
}

// A weak definition in the std namespace: a template instance the compiler emits wherever it is used
// (std::operator+ on strings, …), some of which libstdc++ also exports. Where the harness uses it too, the
// harness's copy comes first in the link and is kept; where it does not, the runner exports the
// submission's copy, and interposing_definitions names it.
bool std_instantiation(const std::string& sym, char type) {
    return (type == 'W' || type == 'V') && (sym.rfind("_ZNSt", 0) == 0 || sym.rfind("_ZNKSt", 0) == 0 || sym.rfind("_ZSt", 0) == 0);
}

bool weak_type(char t) { return t == 'W' || t == 'w' || t == 'V' || t == 'v'; }
bool global_definition(char t) { return (t >= 'A' && t <= 'Z' && t != 'U') || t == 'i' || t == 'u' || t == 'v' || t == 'w'; }

// name → nm type of every definition in `file` ('T', 'W', 'i', …; lowercase = local, but 'i', 'u',
// 'v', 'w' are GNU nm's letters for indirect, unique-global and weak definitions).
std::map<std::string, char> definitions(const std::string& file, bool* ok = nullptr) {
    std::map<std::string, char> defs;
    for (const auto& line : nm({"--defined-only", file}, ok)) {
        const auto w = words(line);
        if (w.size() >= 3 && w[1].size() == 1) defs.emplace(strip_version(w[2]), w[1][0]);
    }
    return defs;
}

// Functions an object registers to run before main (.init_array, .ctors, .preinit_array) or after it
// (.fini_array, .dtors): (section, function name). A relocation against a section ("+ addend") is
// resolved to the function defined there.
std::vector<std::pair<std::string, std::string>> registered_functions(const std::string& obj) {
    std::map<std::string, std::string> section_of_index;  // "76" → ".text.startup"
    static const std::regex section_header(R"(^\s*\[\s*(\d+)\]\s+(\S+))");
    for (const auto& line : tool_lines("readelf", {"-SW", obj})) {
        std::smatch m;
        if (std::regex_search(line, m, section_header)) section_of_index[m[1]] = m[2];
    }
    std::map<std::pair<std::string, unsigned long>, std::string> function_at;  // (section, offset) → name
    for (const auto& line : tool_lines("readelf", {"-sW", obj})) {
        const auto w = words(line);  // Num: Value Size Type Bind Vis Ndx Name
        if (w.size() < 8 || (w[3] != "FUNC" && w[3] != "IFUNC") || !section_of_index.count(w[6])) continue;
        function_at[{section_of_index[w[6]], std::stoul(w[1], nullptr, 16)}] = w[7];
    }
    std::vector<std::pair<std::string, std::string>> found;
    std::string section;
    static const std::regex header(R"(^Relocation section '\.rela?(\.(init_array|ctors|preinit_array|fini_array|dtors))')");
    for (const auto& line : tool_lines("readelf", {"-rW", obj})) {
        std::smatch m;
        if (line.rfind("Relocation section", 0) == 0) {
            section = std::regex_search(line, m, header) ? std::string(m[1]) : "";
            continue;
        }
        if (section.empty()) continue;
        const auto w = words(line);  // Offset Info Type Value Name + Addend
        if (w.size() < 5 || w[0].find_first_not_of("0123456789abcdef") != std::string::npos) continue;
        std::string target = strip_version(w[4]);
        const unsigned long addend = w.size() >= 7 && w[5] == "+" ? std::stoul(w[6], nullptr, 16) : 0;
        if (!target.empty() && target[0] == '.') {
            auto it = function_at.find({target, addend});
            target = it != function_at.end() ? it->second : fmt::format("code at {}+{:#x}", target, addend);
        }
        found.emplace_back(section, target);
    }
    return found;
}

// The compiler's own registrations: C++ dynamic initialisation and CUDA's fatbinary registration.
bool compiler_registration(const std::string& fn) {
    return fn.rfind("_GLOBAL__sub_I_", 0) == 0 || fn.find("__sti____cudaRegisterAll") != std::string::npos;
}

// Raw system call instructions in the object's code: "function: instruction" for each.
std::vector<std::string> raw_system_calls(const std::string& obj) {
    std::vector<std::string> found;
    std::string function = "?";
    static const std::regex label(R"(^[0-9a-f]+ <(.+)>:$)");
    static const std::regex insn(R"(^\s*[0-9a-f]+:\s+(syscall|sysenter|int\s+\$0x80)\b)");
    for (const auto& line : tool_lines("objdump", {"-d", "--no-show-raw-insn", obj})) {
        std::smatch m;
        if (std::regex_search(line, m, label)) function = m[1];
        else if (std::regex_search(line, m, insn)) found.push_back(fmt::format("{}: {}", demangle(function), std::string(m[1])));
    }
    return found;
}

}  // namespace

std::vector<std::string> missing_calls(const std::vector<std::string>& objects, const std::vector<std::string>& required) {
    std::set<std::string> called;
    for (const auto& obj : objects)
        for (const auto& line : nm({"--undefined-only", obj})) called.insert(demangle(last_word(line)));
    std::vector<std::string> missing;
    for (const auto& r : required)
        if (std::none_of(called.begin(), called.end(), [&](const std::string& c) { return c.rfind(r, 0) == 0; }))
            missing.push_back(r);
    return missing;
}

std::vector<std::string> disallowed_symbols(const std::vector<std::string>& objects, const std::vector<std::string>& own,
                                            const std::vector<std::string>& harness_prefixes, const std::string& null_runner) {
    std::set<std::string> defined;
    for (const auto& o : own)
        for (const auto& [name, type] : definitions(o)) defined.insert(name);
    const std::map<std::string, char> harness = null_runner.empty() ? std::map<std::string, char>{} : definitions(null_runner);
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
            if (const char* why = denied(name)) {
                found.push_back(fmt::format("{}: {} ({})", obj, name, why));
                continue;
            }
            // cuBLAS is among the runtimes only so that no submission may define its names; a call to it is no
            // task's own work (a reference to it is named below, unless a task's list allows it).
            const auto runtime = runtime_exports().find(sym);
            if (defined.count(sym) || compiler_glue(sym) || (runtime != runtime_exports().end() && runtime->second != "libcublas.so"))
                continue;
            bool allowed = false;
            for (const auto& p : harness_prefixes) allowed = allowed || name.rfind(p, 0) == 0;
            if (!allowed) found.push_back(fmt::format("{}: {} (not on this task's list of allowed names)", obj, name));
        }
        for (const auto& [sym, type] : definitions(obj)) {
            if (!global_definition(type)) continue;
            const std::string name = demangle(sym);
            if (type == 'i') {
                found.push_back(fmt::format("{}: defines {} as an IFUNC (its resolver runs inside the loader, before main)", obj, name));
            } else if (auto it = runtime_exports().find(sym); it != runtime_exports().end() && !std_instantiation(sym, type)) {
                found.push_back(fmt::format("{}: defines {}, which {} exports (in a runner that replaces the library's for every "
                                            "caller, the harness's own calls included)",
                                            obj, name, it->second));
            } else if (auto h = harness.find(sym); h != harness.end() && weak_type(h->second) && !weak_type(type)) {
                found.push_back(fmt::format("{}: defines {}, which the harness defines weakly (a strong definition would replace "
                                            "the harness's)",
                                            obj, name));
            }
        }
        for (const auto& [section, fn] : registered_functions(obj)) {
            if (compiler_registration(fn)) continue;
            const bool before = section != ".fini_array" && section != ".dtors";
            found.push_back(fmt::format("{}: registers {} in {} (it would run {} main, outside any call)", obj, demangle(fn), section,
                                        before ? "before" : "after"));
        }
        for (const auto& call : raw_system_calls(obj))
            found.push_back(fmt::format("{}: a raw system call in {} (system calls go through the C library, where the allow-list "
                                        "sees them)",
                                        obj, call));
    }
    return found;
}

std::vector<std::string> interposing_definitions(const std::string& runner, const std::string& null_runner) {
    auto exports = [](const std::string& file, bool* ok) {
        std::map<std::string, char> e;
        for (const auto& line : nm({"-D", "--defined-only", file}, ok)) {
            const auto w = words(line);
            if (w.size() >= 3 && w[1].size() == 1) e.emplace(strip_version(w[2]), w[1][0]);
        }
        return e;
    };
    bool ok = false, null_ok = false;
    const auto mine = exports(runner, &ok);
    if (!ok) return {fmt::format("{}: cannot be read by nm", runner)};
    const auto null = null_runner.empty() ? std::map<std::string, char>{} : exports(null_runner, &null_ok);
    std::vector<std::string> found;
    // Variables are exported for copy relocations (stdout, std::cout, typeinfo): the object audit names
    // a submission's variable that shadows a library's. A function is exported only to be called by a
    // shared library in place of its own.
    for (const auto& [sym, type] : mine)
        if ((type == 'T' || type == 'W' || type == 'i') && !(null_ok && null.count(sym)))
            found.push_back(fmt::format("{}: exports the function {} to the shared libraries: the submission's definition replaces "
                                        "the library's for every caller, the harness's own calls included",
                                        runner, demangle(sym)));
    return found;
}

}  // namespace grader
