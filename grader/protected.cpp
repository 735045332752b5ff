// protected.cpp — see protected.h. The sums are checked by coreutils' sha256sum (run without a shell).
#include "grader/protected.h"

#include "grader/isolate.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern const char kProtectedManifest[];  // generated from grader/protected.sha256 by the Makefile

namespace grader {

std::vector<std::string> edited_protected_files(const std::string& root) {
    char tmpl[] = "/tmp/attnlab-manifest-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("cannot create a temporary file for the manifest");
    { std::ofstream(tmpl) << kProtectedManifest; }
    close(fd);
    // --ignore-missing: a submission may hold only its own files; what it does hold must match.
    // No shell: the root (a submission's folder) goes to env -C as one argument.
    const ProgramRun run = run_program({"/usr/bin/env", "-C", root, "sha256sum", "--check", "--quiet", "--ignore-missing", tmpl},
                                       300, "/dev/null");
    std::vector<std::string> edited;
    std::istringstream out(run.out);
    for (std::string s; std::getline(out, s);) {
        const size_t colon = s.find(": FAILED");
        if (colon != std::string::npos) edited.push_back(s.substr(0, colon));
    }
    std::remove(tmpl);
    return edited;
}

}  // namespace grader
