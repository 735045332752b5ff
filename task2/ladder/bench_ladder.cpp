// bench_ladder.cpp — Task 2's optimisation ladders measured on one GPU, in one process (staff
// material): each softmax step against the reference's output and each GEMM step against cuBLAS
// (TF32 off), on ragged and timed shapes, then timed with the project's Bencher (events, device
// synchronised, L2 flushed, median).
//   make ladder-task2 IMPL=reference        (build/reference/bin/ladder_task2)
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "task2/ladder/ladder.h"
#include "task2/task2.h"

using namespace attn;

namespace {

using Softmax = void (*)(const float*, float*, int, int);
using Gemm = void (*)(const float*, const float*, float*, int, int, int, int);

const std::vector<std::pair<std::string, Softmax>> kSoftmax = {
    {"plan (3 passes, trees)", task2_ladder::softmax_three_pass},
    {"float4 + shuffles", task2_ladder::softmax_vec4},
    {"reference (row in registers)", task2::softmax_batched}};
const std::vector<std::pair<std::string, Gemm>> kGemm = {{"plan (16x16, 1 per thread)", task2_ladder::gemm_plan},
                                                         {"4x4 per thread", task2_ladder::gemm_reg4x4},
                                                         {"8x8 per thread, float4", task2_ladder::gemm_reg8x8},
                                                         {"reference (+double buffer)", task2::gemm_nn}};

}  // namespace

int main() {
    return run_benchmark("ladder_task2", stdout, [&](BenchContext& ctx) {
        Bencher& bench = ctx.bencher;
        const Ceilings& c = ctx.ceilings;
        CublasGemm cublas;
        bool ok = true;
        nlohmann::json doc = nlohmann::json::array();

        fmt::print("softmax: bytes = one read and one write of the rows\n");
        for (auto [rows, cols] : std::vector<std::pair<int, int>>{{7, 1}, {33, 4097}, {3, 32769}, {65536, 1024}, {16384, 4096},
                                                                  {4096, 16384}, {2048, 32768}}) {
            const size_t n = size_t(rows) * cols;
            DeviceBuffer<float> x(n), y(n), want(n);
            fill_normal(x.get(), n, 41, 4.f);
            task2::softmax_batched(x.get(), want.get(), rows, cols);
            const bool timed = n >= (size_t(1) << 24);
            if (timed) fmt::print("\n  softmax {} x {}\n", rows, cols);
            double prev = 0;
            for (const auto& [name, fn] : kSoftmax) {
                y.poison();
                fn(x.get(), y.get(), rows, cols);
                const GpuDiff d = gpu_compare(y.get(), want.get(), n, 1e-6, 1e-4);
                if (!d.ok()) fmt::print("  MISMATCH {} at {} x {}\n", name, rows, cols);
                ok = ok && d.ok();
                if (!timed) continue;
                const double ms = bench.time([&] { fn(x.get(), y.get(), rows, cols); }).median_ms, gbps = 8.0 * n / (ms * 1e6);
                fmt::print("    {:<30} {:8.3f} ms {:7.0f} GB/s {:4.0f}% of copy {}\n", name, ms, gbps, 100 * gbps / c.copy_gbps,
                           prev > 0 ? fmt::format("{:.2f}x over the step before", prev / ms) : "");
                doc.push_back({{"kernel", "softmax"}, {"shape", fmt::format("{}x{}", rows, cols)}, {"step", name}, {"ms", ms}, {"gbps", gbps}});
                prev = ms;
            }
        }

        fmt::print("\nGEMM C = A·B: FLOPs = 2·M·N·K\n");
        for (auto [M, N, K] : std::vector<std::tuple<int, int, int>>{{127, 129, 67}, {1, 300, 5}, {257, 33, 1000}, {4096, 4096, 4096},
                                                                    {4095, 4097, 4093}}) {
            const size_t na = size_t(M) * K, nb = size_t(K) * N, nc = size_t(M) * N;
            DeviceBuffer<float> A(na), B(nb), C(nc), want(nc);
            fill_normal(A.get(), na, 51), fill_normal(B.get(), nb, 52);
            cublas.nn(A.get(), B.get(), want.get(), 1, M, N, K);
            const bool timed = M >= 4000;
            const double flops = 2.0 * M * N * double(K);
            if (timed) fmt::print("\n  GEMM {} x {} x {}   cuBLAS {:.1f} TFLOP/s\n", M, N, K,
                                  flops / (bench.time([&] { cublas.nn(A.get(), B.get(), want.get(), 1, M, N, K); }).median_ms * 1e9));
            double prev = 0;
            for (const auto& [name, fn] : kGemm) {
                C.poison();
                fn(A.get(), B.get(), C.get(), 1, M, N, K);
                const GpuDiff d = gpu_compare(C.get(), want.get(), nc, 1e-3, 1e-4);
                if (!d.ok()) fmt::print("  MISMATCH {} at {}x{}x{}: {} outside\n", name, M, N, K, d.outside);
                ok = ok && d.ok();
                if (!timed) continue;
                const double ms = bench.time([&] { fn(A.get(), B.get(), C.get(), 1, M, N, K); }).median_ms, tf = flops / (ms * 1e9);
                fmt::print("    {:<30} {:8.3f} ms {:6.1f} TFLOP/s {:4.0f}% of SGEMM {}\n", name, ms, tf, 100 * tf / c.sgemm_tflops,
                           prev > 0 ? fmt::format("{:.2f}x over the step before", prev / ms) : "");
                doc.push_back({{"kernel", "gemm_nn"}, {"shape", fmt::format("{}x{}x{}", M, N, K)}, {"step", name}, {"ms", ms}, {"tflops", tf}});
                prev = ms;
            }
        }
        fmt::print("\nJSON {}\n", nlohmann::json{{"gpu", ctx.device.name}, {"copy_gbps", c.copy_gbps}, {"sgemm_tflops", c.sgemm_tflops},
                                               {"rows", doc}}.dump());
        if (!ok) throw std::runtime_error("a ladder step disagreed with the reference or cuBLAS");
    });
}
