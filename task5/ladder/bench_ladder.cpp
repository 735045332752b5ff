// bench_ladder.cpp — Task 5's optimisation ladder measured on one GPU, in one process (staff
// material): each step of task5/ladder/ and the reference checked against the harness's
// double-precision decode oracle (cache positions past len filled with NaN), then timed with the
// project's Bencher (events, device synchronised, L2 flushed, median) at the grader's five shapes.
//   make ladder-task5 IMPL=reference        (build/reference/bin/ladder_task5)
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "task5/ladder/ladder.h"
#include "task5/task5.h"

using namespace attn;

namespace {

using Decode = void (*)(const float*, const float*, const float*, float*, int, int, int, int, int);

struct Step {
    std::string name, change;
    Decode fn;
};

const std::vector<Step> kSteps = {
    {"plan", "one block per (b, h), a warp per position, lanes over head dims", task5_ladder::decode_plan},
    {"split-KV", "several blocks per (b, h) over slices of the positions, then a merge", task5_ladder::decode_split},
    {"reference", "8 lanes per position, float4 loads, 4 positions in flight per warp", task5::decode_attention},
};

struct Cache {
    int B, H, max_seq, len, D;
    size_t nc() const { return size_t(B) * H * max_seq * D; }
    size_t nq() const { return size_t(B) * H * D; }
    double bytes() const { return 2.0 * B * H * double(len) * D * 4; }
    std::string name() const { return fmt::format("B={} H={} L={} D={}", B, H, len, D); }
};

}  // namespace

int main() {
    return run_benchmark("ladder_task5", stdout, [&](BenchContext& ctx) {
        Bencher& bench = ctx.bencher;
        const Ceilings& c = ctx.ceilings;
        bool ok = true;
        // ragged lengths; positions len … max_seq−1 hold NaN, so a read past the end shows
        for (const Cache& s : std::vector<Cache>{{1, 2, 8, 1, 32, }, {2, 3, 300, 127, 64}, {1, 2, 1100, 1000, 96}, {2, 2, 5000, 4097, 128},
                                                  {1, 1, 20000, 16384, 128}}) {
            DeviceBuffer<float> kc(s.nc()), vc(s.nc()), q(s.nq()), o(s.nq()), want(s.nq());
            kc.poison(), vc.poison();
            for (int bh = 0; bh < s.B * s.H; ++bh) {
                fill_normal(kc.get() + size_t(bh) * s.max_seq * s.D, size_t(s.len) * s.D, 21 + bh);
                fill_normal(vc.get() + size_t(bh) * s.max_seq * s.D, size_t(s.len) * s.D, 521 + bh);
            }
            fill_normal(q.get(), s.nq(), 7);
            DeviceBuffer<double> scores(size_t(s.B) * s.H * s.len);
            decode_oracle(q.get(), kc.get(), vc.get(), want.get(), s.B * s.H, s.max_seq, s.len, s.D, scores.get());
            for (const Step& st : kSteps) {
                o.poison();
                st.fn(q.get(), kc.get(), vc.get(), o.get(), s.B, s.H, s.max_seq, s.len, s.D);
                CUDA_CHECK(cudaDeviceSynchronize());
                const GpuDiff d = gpu_compare(o.get(), want.get(), s.nq(), 2e-5, 1e-4);
                if (!d.ok()) fmt::print("  MISMATCH {} at {}: {} outside, {} non-finite\n", st.name, s.name(), d.outside, d.nonfinite);
                ok = ok && d.ok();
            }
        }
        fmt::print("ragged lengths 1, 127, 1000, 4097, 16384 (NaN past len): {}\n", ok ? "every step agrees with the oracle" : "MISMATCH");

        nlohmann::json doc = nlohmann::json::array();
        for (const Cache& s : std::vector<Cache>{{1, 32, 1024, 1024, 128}, {1, 32, 8192, 8192, 128}, {1, 32, 32768, 32768, 128},
                                                  {8, 32, 8192, 8192, 128}, {32, 32, 4096, 4096, 128}}) {
            DeviceBuffer<float> kc(s.nc()), vc(s.nc()), q(s.nq()), o(s.nq()), want(s.nq());
            fill_normal(kc.get(), s.nc(), 31), fill_normal(vc.get(), s.nc(), 32), fill_normal(q.get(), s.nq(), 33);
            task5::decode_attention(q.get(), kc.get(), vc.get(), want.get(), s.B, s.H, s.max_seq, s.len, s.D);
            fmt::print("\ndecode {}   ({:.1f} MB of K and V)\n", s.name(), s.bytes() / 1e6);
            fmt::print("  {:<10} {:>9} {:>8} {:>6} {:>8} {:>8}\n", "step", "ms", "GB/s", "%copy", "x prev", "x ref");
            double prev = 0, ref = 0;
            std::vector<std::pair<std::string, double>> times;
            for (const Step& st : kSteps) {
                const double ms = bench.time([&] { st.fn(q.get(), kc.get(), vc.get(), o.get(), s.B, s.H, s.max_seq, s.len, s.D); })
                                      .median_ms;
                times.push_back({st.name, ms});
                const GpuDiff d = gpu_compare(o.get(), want.get(), s.nq(), 2e-5, 1e-4);
                ok = ok && d.ok();
                if (st.name == "reference") ref = ms;
            }
            for (const auto& [name, ms] : times) {
                const double gbps = s.bytes() / (ms * 1e6);
                fmt::print("  {:<10} {:>9.4f} {:>8.0f} {:>5.0f}% {:>8} {:>7.2f}x\n", name, ms, gbps, 100 * gbps / c.copy_gbps,
                           prev > 0 ? fmt::format("{:.2f}x", prev / ms) : "", ms / ref);
                doc.push_back({{"shape", s.name()}, {"step", name}, {"ms", ms}, {"gbps", gbps}, {"ref_ms", ref}});
                prev = ms;
            }
        }
        fmt::print("\nJSON {}\n", nlohmann::json{{"gpu", ctx.device.name}, {"copy_gbps", c.copy_gbps}, {"rows", doc}}.dump());
        if (!ok) throw std::runtime_error("a ladder step disagreed with the oracle or the reference");
    });
}
