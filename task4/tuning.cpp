// tuning.cpp — reads task4/tuning.json; see tuning.h.
#include "task4/tuning.h"

#include "common/golden.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>


namespace task4 {

std::string FlashConfig::str() const { return fmt::format("{}x{}x{}", br, bc, threads); }

namespace {

FlashConfig parse(const std::string& s, const std::string& where) {
    FlashConfig c;
    if (std::sscanf(s.c_str(), "%dx%dx%d", &c.br, &c.bc, &c.threads) != 3)
        throw std::invalid_argument(fmt::format("{}: '{}' is not BRxBCxTHREADS", where, s));
    return c;
}

std::map<int, FlashConfig> load() {
    std::map<int, FlashConfig> table;
    const std::string path = attn::repo_path("ATTNLAB_TASK4_TUNING", "task4/tuning.json");
    std::ifstream in(path);
    if (!in) return table;  // built-in defaults only
    try {
        const nlohmann::json j = nlohmann::json::parse(in);
        for (auto& [key, value] : j.items())
            if (key[0] != '_') table[std::stoi(key)] = parse(value.get<std::string>(), path);
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(fmt::format("{}: {}", path, e.what()));
    }
    return table;
}

}  // namespace

FlashConfig tuned_config(int d) {
    static std::once_flag once;
    static std::map<int, FlashConfig> table;
    std::call_once(once, [] { table = load(); });
    auto it = table.find(d);
    return it != table.end() ? it->second : FlashConfig{64, 64, 128};
}

}  // namespace task4
