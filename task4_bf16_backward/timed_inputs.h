// timed_inputs.h — the inputs of part 4d's graded timing (grader/timed.cpp), made the same way on both sides: the
// runner makes them for each timed call ("timed_bf16_backward", task4_bf16_backward/serve.cpp), the grader makes them
// again to check that call's dQ, dK and dV against its oracle (common/cuda/bf16_backward_oracle.h).
//
// Call i's q, k, v are fill_normal_bf16 from seed + 4i, + 1, + 2 (every timed call's nonces); its dout and o from
// seed + 4i mixed with two constants. lse is not a forward's: row i's is log(keys it sees) + 1/2. For q and k drawn
// N(0, 1) a score q·k/√D is about N(0, 1), whose exponential has the mean e^(1/2), so each row's probabilities
// exp(s − lse) sum to about 1, as a forward's would; and the backward's arithmetic and speed do not depend on o and
// lse having come from a forward (the oracle takes the same o and lse), so no forward runs for each call.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace task4::bf16_backward_timed {

struct Geometry {
    int B, H, S, D;  // Sq = Sk = S
    bool causal;
    size_t elements() const { return size_t(B) * H * S * D; }  // of q, k, v, o, dout, dq, dk, dv each
    size_t rows() const { return size_t(B) * H * S; }
};

inline uint64_t dout_seed(uint64_t s) { return s ^ 0xd0d0d0d000000000ull; }
inline uint64_t o_seed(uint64_t s) { return s ^ 0x0f0f0f0f00000000ull; }

// [B, H, S] float32: every call's (it depends on the shape alone).
inline std::vector<float> lse(const Geometry& g) {
    std::vector<float> l(g.rows());
    for (size_t r = 0; r < l.size(); ++r) {
        const size_t i = r % size_t(g.S), visible = g.causal ? i + 1 : size_t(g.S);
        l[r] = float(std::log(double(visible)) + 0.5);
    }
    return l;
}

}  // namespace task4::bf16_backward_timed
