// timed_inputs.h — the inputs of part 5b's graded timing (grader/timed.cpp), made the same way on both sides: the
// runner makes them for each timed call ("timed_paged", task5_paged/serve.cpp), the grader makes them again to check
// that call's output against its oracle. Every sequence holds L positions; every page of the pool is used once, in
// an order shuffled by the call's nonce; call i's q, K pool and V pool are fill_normal_bf16 from seed + 4i, + 1, + 2.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace task5::timed {

struct Geometry {
    int B, H_q, H_kv, L, D, page_size;
    int pages_per_seq() const { return (L + page_size - 1) / page_size; }
    int num_pages() const { return B * pages_per_seq(); }
    size_t q_elements() const { return size_t(B) * H_q * D; }
    size_t pool_elements() const { return size_t(num_pages()) * page_size * H_kv * D; }
};

inline std::vector<int> page_table(const Geometry& g, uint64_t seed) {
    std::vector<int> t(static_cast<size_t>(g.num_pages()));
    std::iota(t.begin(), t.end(), 0);
    std::shuffle(t.begin(), t.end(), std::mt19937_64(seed ^ 0x9a6e5ull));
    return t;
}

inline std::vector<int> lengths(const Geometry& g) { return std::vector<int>(static_cast<size_t>(g.B), g.L); }

}  // namespace task5::timed
