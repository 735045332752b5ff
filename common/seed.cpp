// seed.cpp — see seed.h.
#include "common/seed.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace attn {

uint64_t grader_seed() {
    const char* env = std::getenv("GRADER_SEED");
    return env && *env ? std::strtoull(env, nullptr, 10) : 20261122ull;
}

std::mt19937_64 rng_for(const std::string& name) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the name, mixed with the seed
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    std::seed_seq seq{uint32_t(grader_seed()), uint32_t(grader_seed() >> 32), uint32_t(h), uint32_t(h >> 32)};
    return std::mt19937_64(seq);
}

// Not std::uniform_int_distribution: its output differs between standard libraries.
int uniform_int(std::mt19937_64& g, int lo, int hi) { return lo + int(g() % uint64_t(hi - lo + 1)); }

void refill(std::mt19937_64& g, Tensor& t, float scale) {
    for (float& x : t.data) {  // Box–Muller from two 53-bit uniforms, portable
        const double u1 = (double(g() >> 11) + 1.0) * 0x1.0p-53, u2 = double(g() >> 11) * 0x1.0p-53;
        x = float(scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
}

float peak_scale(std::mt19937_64& g, int draw) { return draw < 2 ? 1.0f : float(uniform_int(g, 2, 4)); }

std::string peak_note(float peak) { return peak == 1.0f ? "" : fmt::format(", q and k ×{:g}", peak); }

Tensor random_tensor(std::mt19937_64& g, const Shape& shape, float scale) {
    Tensor t(shape);
    refill(g, t, scale);
    return t;
}

}  // namespace attn
