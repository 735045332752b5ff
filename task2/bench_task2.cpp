// bench_task2.cpp — Task 2 benchmarks, side by side in one run on one GPU:
//   softmax vs the copy-bandwidth ceiling; the tiled GEMMs vs cuBLAS SGEMM (checked against it
//   first); the unfused attention vs the same pipeline with cuBLAS GEMMs.
//   make bench-task2 IMPL=reference        (needs a GPU; the ceilings are measured in the same run)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "task2/task2.h"

using namespace attn;

namespace {

// Largest |x − y| over max |y|: how far our GEMM is from cuBLAS on the very data we time.
double relative_gap(const DeviceBuffer<float>& x, const DeviceBuffer<float>& y) {
    const auto hx = x.download(), hy = y.download();
    double diff = 0, scale = 0;
    for (size_t i = 0; i < hx.size(); ++i) {
        diff = std::max(diff, double(std::fabs(hx[i] - hy[i])));
        scale = std::max(scale, double(std::fabs(hy[i])));
    }
    return std::isfinite(diff) ? diff / scale : INFINITY;
}

void bench_softmax(Bencher& b, const Ceilings& c) {
    fmt::print("\n# softmax (one block per row): bytes = rows·cols·4 read + written\n");
    const int shapes[][2] = {{65536, 1024}, {16384, 4096}, {4096, 16384}, {2048, 32768}, {4000, 1000}};
    for (auto [rows, cols] : shapes) {
        const size_t n = size_t(rows) * cols;
        DeviceBuffer<float> x(n), y(n);
        fill_normal(x.get(), n, 7, 4.0f);
        Timing t = b.time([&] { task2::softmax_batched(x.get(), y.get(), rows, cols); });
        fmt::print("{}\n", perf_line(fmt::format("softmax {}×{}", rows, cols), t, 0, 2.0 * n * 4, c));
    }
}

void bench_gemm(Bencher& b, const Ceilings& c, CublasGemm& cublas) {
    fmt::print("\n# GEMM, fp32: FLOPs = 2·M·N·K\n");
    const int shapes[][3] = {{4096, 4096, 4096}, {4095, 4097, 4093}, {1024, 1024, 128}};
    for (auto [M, N, K] : shapes) {
        DeviceBuffer<float> A(size_t(M) * K), B(size_t(N) * K), C(size_t(M) * N), R(size_t(M) * N);
        fill_uniform(A.get(), A.size(), 11, -1, 1);
        fill_uniform(B.get(), B.size(), 12, -1, 1);
        const double flops = 2.0 * M * N * K;
        for (bool nt : {false, true}) {
            const char* kind = nt ? "A·Bᵀ" : "A·B";
            (nt ? task2::gemm_nt : task2::gemm_nn)(A.get(), B.get(), C.get(), 1, M, N, K);
            if (nt) cublas.nt(A.get(), B.get(), R.get(), 1, M, N, K);
            else cublas.nn(A.get(), B.get(), R.get(), 1, M, N, K);
            CUDA_CHECK(cudaDeviceSynchronize());
            const double gap = relative_gap(C, R);
            Timing ours = b.time([&] { (nt ? task2::gemm_nt : task2::gemm_nn)(A.get(), B.get(), C.get(), 1, M, N, K); });
            Timing ref = b.time([&] {
                if (nt) cublas.nt(A.get(), B.get(), R.get(), 1, M, N, K);
                else cublas.nn(A.get(), B.get(), R.get(), 1, M, N, K);
            });
            const std::string shape = fmt::format("{}×{}×{}", M, N, K);
            fmt::print("{}\n", perf_line(fmt::format("reference {} {}", kind, shape), ours, flops, 0, c));
            fmt::print("{}\n", perf_line(fmt::format("cuBLAS    {} {}", kind, shape), ref, flops, 0, c));
            fmt::print("  → reference at {:.0f}% of cuBLAS; max |ours − cuBLAS| / max|C| = {:.1e}{}\n",
                       100 * ref.median_ms / ours.median_ms, gap, gap < 1e-5 ? "" : "  MISMATCH");
        }
    }
}

void bench_attention(Bencher& b, const Ceilings& c, CublasGemm& cublas) {
    fmt::print("\n# unfused attention on [BH, S, D] (projections excluded): FLOPs = 4·BH·S²·D\n");
    const int shapes[][3] = {{128, 128, 16}, {128, 1024, 128}, {32, 4096, 128}};  // BH, S, D
    for (auto [BH, S, D] : shapes) {
        const size_t n = size_t(BH) * S * D;
        DeviceBuffer<float> q(n), k(n), v(n), o(n), scores(size_t(BH) * S * S);
        fill_normal(q.get(), n, 1), fill_normal(k.get(), n, 2), fill_normal(v.get(), n, 3);
        const double flops = 4.0 * BH * S * S * D;
        for (bool causal : {false, true}) {
            Timing ours = b.time([&] { task2::attention_heads(q.get(), k.get(), v.get(), o.get(), BH, S, D, causal, scores.get()); });
            Timing with_cublas = b.time([&] {
                cublas.nt(q.get(), k.get(), scores.get(), BH, S, S, D, 1.0f / std::sqrt(float(D)));
                task2::scale_and_causal_mask(scores.get(), BH, S, S, 1.0f, causal);
                task2::softmax_batched(scores.get(), scores.get(), BH * S, S);
                cublas.nn(scores.get(), v.get(), o.get(), BH, S, D, S);
            });
            const std::string shape = fmt::format("BH={} S={} D={}{}", BH, S, D, causal ? " causal" : "");
            fmt::print("{}\n", perf_line("task-2 pipeline " + shape, ours, flops, 0, c));
            fmt::print("{}\n", perf_line("cuBLAS + softmax " + shape, with_cublas, flops, 0, c));
        }
    }
}

}  // namespace

int main() {
    return run_benchmark("bench_task2", stdout, [](BenchContext& ctx) {
        fmt::print("timing: CUDA events, device synchronised, 3 warm-ups, L2 flushed before each of 20 calls, median\n");
        CublasGemm cublas;
        bench_softmax(ctx.bencher, ctx.ceilings);
        bench_gemm(ctx.bencher, ctx.ceilings, cublas);
        bench_attention(ctx.bencher, ctx.ceilings, cublas);
    });
}
