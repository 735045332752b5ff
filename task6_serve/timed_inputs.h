// timed_inputs.h — the inputs of part 6b's graded timing (grader/timed.cpp), made the same way on both sides: the
// runner makes them for each timed call ("timed_serve_step", task6_serve/serve.cpp), the grader makes them again to
// check that call's outputs against its oracle (common/cuda/paged_oracle.h).
//
// A timed call is one step of a server: a newcomer's prompt of `prompt` tokens is prefilled (prefill_paged), then one
// decode step runs for the B sequences already running and the newcomer (decode_paged over B + 1 rows). Running
// sequence b holds cached(b) positions before the step, spread from min_cached to max_cached; the step appends one to
// each. (Rows of a few keys are the checked cases' business: there bf16's rounding of a few probabilities is most of
// the output's error, which would drown a timed call's check of precision.)
// Every page of the pool belongs to one sequence, in an order shuffled by the call's nonce s (call i: seed + 4i); the
// pools and the activations are fill_normal_bf16 from the seeds below.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace task6::timed {

struct Step {
    int B, H_q, H_kv, D, page_size, min_cached, max_cached, prompt;
    int rows() const { return B + 1; }  // the decode step's rows: the running sequences, then the newcomer
    int cached(int b) const {
        return B == 1 ? max_cached : min_cached + int(int64_t(max_cached - min_cached) * b / (B - 1));
    }
    // positions held after the step (the decode step's lengths): one more than before, the newcomer's prompt and token
    int length_after(int b) const { return b < B ? cached(b) + 1 : prompt + 1; }
    int pages_of(int b) const { return (length_after(b) + page_size - 1) / page_size; }
    int num_pages() const {
        int n = 0;
        for (int b = 0; b < rows(); ++b) n += pages_of(b);
        return n;
    }
    size_t pool_elements() const { return size_t(num_pages()) * page_size * H_kv * D; }
    size_t prompt_q_elements() const { return size_t(prompt) * H_q * D; }
    size_t prompt_kv_elements() const { return size_t(prompt) * H_kv * D; }
    size_t step_q_elements() const { return size_t(rows()) * H_q * D; }
    size_t step_kv_elements() const { return size_t(rows()) * H_kv * D; }
    size_t positions_after() const {  // K and V rows the decode step reads
        size_t n = 0;
        for (int b = 0; b < rows(); ++b) n += size_t(length_after(b));
        return n;
    }
};

// The seeds of call nonce s's inputs (s + 3 is its fingerprint's: common/cuda/timed_calls.h).
struct Seeds {
    uint64_t k_pool, v_pool, q_prompt, k_prompt, v_prompt, q_step, k_step, v_step;
};
inline Seeds seeds(uint64_t s) {
    return {s + 1, s + 2, s ^ 0x51ed0000000001ull, s ^ 0x51ed0000000002ull, s ^ 0x51ed0000000003ull,
            s ^ 0x51ed0000000004ull, s ^ 0x51ed0000000005ull, s ^ 0x51ed0000000006ull};
}

// Each sequence's pages (row b: pages_of(b) of them; the newcomer's last): the pool's pages 0 … num_pages − 1 in an
// order shuffled by the nonce, handed out in turn.
inline std::vector<std::vector<int>> pages(const Step& g, uint64_t s) {
    std::vector<int> order(static_cast<size_t>(g.num_pages()));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(s ^ 0x6b5e7ull));
    std::vector<std::vector<int>> held(static_cast<size_t>(g.rows()));
    auto next = order.begin();
    for (int b = 0; b < g.rows(); ++b) {
        held[size_t(b)].assign(next, next + g.pages_of(b));
        next += g.pages_of(b);
    }
    return held;
}

}  // namespace task6::timed
