// bench_shapes.h — shapes the bf16 attention benchmarks share (bench_task4_bf16, bench_task4_bf16_backward): the
// anchors of FlashAttention-4's and cuDNN's tables (16k or 64k tokens a batch, head_dim 128 and 64), and the
// --shape=B,H,S,D argument that names shapes of one's own.
#pragma once
#include <array>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace attn {

// A shape a benchmark times, causal or not: its name as the benchmarks print it, and the forward's FLOPs,
// 4·B·H·S²·D, halved when causal (a backward does 2.5 times as many: FlashAttention-2's count).
struct BenchShape {
    int B, H, S, D;
    bool causal;
    std::string name() const { return fmt::format("B={} H={} S={} D={}{}", B, H, S, D, causal ? " causal" : ""); }
    double forward_flops() const { return 4.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0); }
};

// The anchors, non-causal (the benchmarks time each causal and not).
inline constexpr std::array<BenchShape, 6> kAnchorShapes = {{{16, 16, 1024, 128, false}, {4, 16, 4096, 128, false},
                                                             {1, 16, 16384, 128, false}, {16, 32, 1024, 64, false},
                                                             {4, 32, 4096, 64, false},   {1, 32, 16384, 64, false}}};

// The shape of an argument "--shape=B,H,S,D" (non-causal): four positive integers, D one of `head_dims`; nullopt when
// it is not.
inline std::optional<BenchShape> parse_shape_arg(const std::string& arg, std::initializer_list<int> head_dims) {
    BenchShape s{};
    char tail = 0;
    if (arg.rfind("--shape=", 0) != 0 ||
        std::sscanf(arg.c_str() + 8, "%d,%d,%d,%d%c", &s.B, &s.H, &s.S, &s.D, &tail) != 4 || s.B < 1 || s.H < 1 || s.S < 1)
        return std::nullopt;
    for (int d : head_dims)
        if (s.D == d) return s;
    return std::nullopt;
}

}  // namespace attn
