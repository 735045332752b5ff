// bench_task4.cpp — Task 4 benchmarks on one GPU, in one process: the fused kernel against the
// Task-2 unfused pipeline (reference) and against cuBLAS GEMMs + softmax, at the course's four
// shapes (B=4 and B=64 at S=128 and S=4096, 32 heads of 128, causal and not), plus the shapes of
// the torch anchors. The attention core alone is timed (projections excluded).
//   make bench-task4 IMPL=reference [ARGS="--quick"]
// Where B·H·S² floats of scores do not fit, the unfused pipelines run over slices of B·H heads
// and their summed time is reported (so marked); the fused kernel always runs whole.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "task2/task2.h"
#include "task4/task4.h"

using namespace attn;

namespace {

constexpr size_t kScoresBudget = size_t(4) << 30;  // bytes of S×S scores an unfused slice may use

struct Shape4 {
    int B, H, S, D;
    bool causal;
};

double flops_of(const Shape4& s) { return 4.0 * s.B * s.H * double(s.S) * s.S * s.D * (s.causal ? 0.5 : 1.0); }

void run_shape(Bencher& b, const Ceilings& c, CublasGemm& gemm, const Shape4& s, bool course) {
    const int BH = s.B * s.H;
    const size_t head = size_t(s.S) * s.D, n = BH * head;
    const int slice = int(std::max<size_t>(1, std::min<size_t>(BH, kScoresBudget / (size_t(s.S) * s.S * 4))));
    DeviceBuffer<float> q(n), k(n), v(n), o(n), o_ref(n), scores(size_t(slice) * s.S * s.S);
    fill_normal(q.get(), n, 1), fill_normal(k.get(), n, 2), fill_normal(v.get(), n, 3);
    const bool big = flops_of(s) > 2e12;
    const BenchOptions opt = big ? BenchOptions{1, 5, true} : BenchOptions{3, 20, true};

    const Timing flash =
        b.time([&] { task4::flash_attention_forward(q.get(), k.get(), v.get(), o.get(), s.B, s.H, s.S, s.S, s.D, s.causal); }, opt);
    auto over_slices = [&](auto&& fn) {
        for (int h0 = 0; h0 < BH; h0 += slice) fn(h0 * head, std::min(slice, BH - h0));
    };
    const Timing unfused = b.time([&] {
        over_slices([&](size_t off, int nh) {
            task2::attention_heads(q.get() + off, k.get() + off, v.get() + off, o_ref.get() + off, nh, s.S, s.D, s.causal,
                                   scores.get());
        });
    }, opt);
    const Timing cublas = b.time([&] {
        over_slices([&](size_t off, int nh) {
            attention_oracle(gemm, q.get() + off, k.get() + off, v.get() + off, o_ref.get() + off, nh, s.S, s.S, s.D,
                             s.causal, scores.get());
        });
    }, opt);
    CUDA_CHECK(cudaDeviceSynchronize());

    // the fused output of the timed runs against the cuBLAS pipeline's, on the first slice
    const size_t check = std::min<size_t>(n, size_t(slice) * head);
    std::vector<float> got(check), want(check);
    CUDA_CHECK(cudaMemcpy(got.data(), o.get(), check * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(want.data(), o_ref.get(), check * 4, cudaMemcpyDeviceToHost));
    double gap = 0;
    for (size_t i = 0; i < check; ++i) gap = std::max(gap, double(std::fabs(got[i] - want[i])));

    const double fl = flops_of(s);
    const double io = 4.0 * n * 4;  // q, k, v read and o written once
    const double unfused_mem = io + double(BH) * s.S * s.S * 4, slice_mem = io + double(scores.bytes());
    const std::string name = fmt::format("B={} H={} S={} D={}{}", s.B, s.H, s.S, s.D, s.causal ? " causal" : "");
    const std::string sliced = slice < BH ? fmt::format(" (sum of {} slices)", (BH + slice - 1) / slice) : "";
    fmt::print("\n{}{}   fused vs cuBLAS pipeline: max |diff| {:.1e}\n", course ? "[course] " : "", name, gap);
    fmt::print("  {}   memory {:.2f} GB\n", perf_line("fused (task 4)", flash, fl, 0, c), io / 1e9);
    fmt::print("  {}   memory {:.2f} GB{}\n", perf_line("unfused task-2 pipeline" + sliced, unfused, fl, 0, c),
               slice_mem / 1e9, slice < BH ? fmt::format(" (whole: {:.1f} GB)", unfused_mem / 1e9) : "");
    fmt::print("  {}   memory {:.2f} GB\n", perf_line("unfused cuBLAS + softmax" + sliced, cublas, fl, 0, c), slice_mem / 1e9);
    fmt::print("  speedup of the fused kernel: {:.2f}x over the task-2 pipeline, {:.2f}x over cuBLAS + softmax\n",
               unfused.median_ms / flash.median_ms, cublas.median_ms / flash.median_ms);
}

}  // namespace

int main(int argc, char** argv) {
    std::string why;
    if (!has_cuda_device(&why)) {
        fmt::print("skipped: no CUDA device ({})\n", why);
        return 77;
    }
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    try {
        const DeviceInfo d = device_info();
        Bencher b;
        const Ceilings c = measure_ceilings(b);
        fmt::print("GPU: {} ({} SMs)   ceilings measured now: copy {:.0f} GB/s, cuBLAS SGEMM {:.1f} TFLOP/s\n", d.name,
                   d.sms, c.copy_gbps, c.sgemm_tflops);
        fmt::print("FLOPs = 4·B·H·S²·D (halved when causal); timing: events, device synchronised, L2 flushed, median\n");
        CublasGemm gemm;
        for (bool causal : {false, true}) {
            run_shape(b, c, gemm, {4, 32, 128, 128, causal}, true);
            if (!quick) run_shape(b, c, gemm, {64, 32, 4096, 128, causal}, true);
        }
        fmt::print("\n# the shapes of shared/bench/anchors_torch.py (torch SDPA fp32), for a side-by-side reading\n");
        run_shape(b, c, gemm, {4, 16, 4096, 128, false}, false);
        for (int S : {1024, 4096})
            for (bool causal : {false, true}) run_shape(b, c, gemm, {1, 8, S, 64, causal}, false);
    } catch (const std::exception& e) {
        fmt::print(stderr, "bench_task4: {}\n", e.what());
        return 1;
    }
    return 0;
}
