// tune_task4.cpp — times every compiled (Br, Bc, threads) of the reference FlashAttention kernel
// per head_dim on this GPU and prints a table and the tuning.json that picks the fastest.
//   make tune-task4            (reference only; copy the printed JSON to task4/tuning.json)
// Problem per head_dim: B=4, H=16, S=4096 (non-causal) — the torch anchor's shape.
#include <fmt/format.h>

#include <map>

#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "task4/tuning.h"

using namespace attn;

int main() {
    return run_benchmark("tune_task4", stdout, [](BenchContext& ctx) {
        const int B = 4, H = 16, S = 4096;
        std::map<int, std::string> best;
        for (int D : {32, 64, 96, 128}) {
            const size_t n = size_t(B) * H * S * D;
            DeviceBuffer<float> q(n), k(n), v(n), o(n);
            fill_normal(q.get(), n, 1), fill_normal(k.get(), n, 2), fill_normal(v.get(), n, 3);
            const double flops = 4.0 * B * H * double(S) * S * D;
            double best_ms = 1e30;
            fmt::print("\nhead_dim {} (B={} H={} S={})\n", D, B, H, S);
            for (const auto& cfg : task4::compiled_configs(D)) {
                const Timing t = ctx.bencher.time([&] {
                    task4::flash_forward_with(cfg, q.get(), k.get(), v.get(), o.get(), B, H, S, S, D, false);
                }, {2, 10, true});
                fmt::print("  {}\n", perf_line(fmt::format("Br x Bc x threads = {}", cfg.str()), t, flops, 0, ctx.ceilings));
                if (t.median_ms < best_ms) best_ms = t.median_ms, best[D] = cfg.str();
            }
        }
        fmt::print("\ntuning.json for this GPU:\n{{\n");
        for (auto it = best.begin(); it != best.end(); ++it)
            fmt::print("  \"{}\": \"{}\"{}\n", it->first, it->second, std::next(it) == best.end() ? "" : ",");
        fmt::print("}}\n");
    });
}
