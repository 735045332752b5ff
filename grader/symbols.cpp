// symbols.cpp — see symbols.h. Uses binutils' nm.
#include "grader/symbols.h"

#include <fmt/format.h>

#include <cstdio>

namespace grader {

std::vector<std::string> forbidden_calls(const std::vector<std::string>& objects, const std::vector<std::string>& forbidden) {
    std::vector<std::string> found;
    for (const auto& obj : objects) {
        FILE* p = popen(fmt::format("nm -C --undefined-only '{}' 2>/dev/null", obj).c_str(), "r");
        if (!p) continue;
        char line[4096];
        bool any = false;
        while (fgets(line, sizeof line, p)) {
            any = true;
            std::string sym(line);
            sym.erase(sym.find_last_not_of("\n") + 1);
            const size_t u = sym.find(" U ");
            if (u != std::string::npos) sym = sym.substr(u + 3);
            for (const auto& f : forbidden)
                if (sym.find(f) != std::string::npos) {
                    found.push_back(fmt::format("{}: {}", obj, sym));
                    break;
                }
        }
        if (pclose(p) != 0 && !any) found.push_back(fmt::format("{}: cannot be read by nm", obj));
    }
    return found;
}

}  // namespace grader
