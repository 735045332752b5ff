// bench_task4.cpp — Task 4 benchmarks on one GPU, in one process: the fused kernel against the
// Task-2 unfused pipeline (reference) and against cuBLAS GEMMs + softmax, at the course's four
// shapes (B=4 and B=64 at S=128 and S=4096, 32 heads of 128, causal and not), plus the shapes of
// the torch anchors. The attention core alone is timed (projections excluded).
//   make bench-task4 IMPL=reference [ARGS="--quick"]
// (A student's table: it links their kernel. Graded timing is the grader's own, grader/timed.h.)
// Where B·H·S² floats of scores do not fit, the unfused pipelines run over slices of B·H heads
// and their summed time is reported (so marked); the fused kernel always runs whole.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "common/seed.h"
#include "task2/task2.h"
#include "task4/task4.h"

using namespace attn;

namespace {

constexpr size_t kScoresBudget = size_t(4) << 30;  // bytes of S×S scores an unfused slice may use
FILE* out = stdout;

struct Shape4 {
    int B, H, S, D;
    bool causal;
    std::string name() const { return fmt::format("B={} H={} S={} D={}{}", B, H, S, D, causal ? " causal" : ""); }
    double flops() const { return 4.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0); }
};

struct Problem {
    Shape4 s;
    int BH, slice;
    size_t head, n;
    DeviceBuffer<float> q, k, v, o, o_ref, scores;
    explicit Problem(const Shape4& shape)
        : s(shape), BH(shape.B * shape.H),
          slice(int(std::max<size_t>(1, std::min<size_t>(size_t(BH), kScoresBudget / (size_t(s.S) * s.S * 4))))),
          head(size_t(s.S) * s.D), n(size_t(BH) * head), q(n), k(n), v(n), o(n), o_ref(n),
          scores(size_t(slice) * s.S * s.S) {}
    void fill(uint64_t seed) { fill_normal(q.get(), n, seed), fill_normal(k.get(), n, seed + 1), fill_normal(v.get(), n, seed + 2); }
    template <class F>
    void over_slices(F&& fn) {
        for (int h0 = 0; h0 < BH; h0 += slice) fn(size_t(h0) * head, std::min(slice, BH - h0));
    }
    void flash() { task4::flash_attention_forward(q.get(), k.get(), v.get(), o.get(), s.B, s.H, s.S, s.S, s.D, s.causal); }
    void task2_pipeline() {
        over_slices([&](size_t off, int nh) {
            task2::attention_heads(q.get() + off, k.get() + off, v.get() + off, o_ref.get() + off, nh, s.S, s.D, s.causal,
                                   scores.get());
        });
    }
    void cublas_pipeline(CublasGemm& gemm, float* dst) {
        over_slices([&](size_t off, int nh) {
            attention_oracle(gemm, q.get() + off, k.get() + off, v.get() + off, dst + off, nh, s.S, s.S, s.D, s.causal,
                             scores.get());
        });
    }
    double io_bytes() const { return 4.0 * double(n) * 4; }
    std::string sliced() const { return slice < BH ? fmt::format(" (sum of {} slices)", (BH + slice - 1) / slice) : ""; }
};

BenchOptions options_for(const Shape4& s) { return s.flops() > 2e12 ? BenchOptions{1, 5, true} : BenchOptions{3, 20, true}; }

void print_rows(const Problem& p, const Ceilings& c, const Timing& flash, const Timing& unfused, const Timing& cublas) {
    const double fl = p.s.flops(), whole = p.io_bytes() + double(p.BH) * p.s.S * p.s.S * 4;
    const double slice_mem = p.io_bytes() + double(p.scores.bytes());
    fmt::print(out, "  {}   memory {:.2f} GB\n", perf_line("fused (task 4)", flash, fl, 0, c), p.io_bytes() / 1e9);
    fmt::print(out, "  {}   memory {:.2f} GB{}\n", perf_line("unfused task-2 pipeline" + p.sliced(), unfused, fl, 0, c),
               slice_mem / 1e9, p.slice < p.BH ? fmt::format(" (whole: {:.1f} GB)", whole / 1e9) : "");
    fmt::print(out, "  {}   memory {:.2f} GB\n", perf_line("unfused cuBLAS + softmax" + p.sliced(), cublas, fl, 0, c),
               slice_mem / 1e9);
    fmt::print(out, "  speedup of the fused kernel: {:.2f}x over the task-2 pipeline, {:.2f}x over cuBLAS + softmax\n",
               unfused.median_ms / flash.median_ms, cublas.median_ms / flash.median_ms);
}

void run_shape(Bencher& b, const Ceilings& c, CublasGemm& gemm, const Shape4& s, bool course) {
    Problem p(s);
    p.fill(1);
    const BenchOptions opt = options_for(s);
    const Timing flash = b.time([&] { p.flash(); }, opt);
    const Timing unfused = b.time([&] { p.task2_pipeline(); }, opt);
    const Timing cublas = b.time([&] { p.cublas_pipeline(gemm, p.o_ref.get()); }, opt);
    const GpuDiff diff = gpu_compare(p.o.get(), p.o_ref.get(), p.n, 2e-5, 1e-4);
    fmt::print(out, "\n{}{}   fused vs cuBLAS pipeline: max |diff| {:.1e}{}\n", course ? "[course] " : "", s.name(),
               diff.max_abs, diff.ok() ? "" : "  MISMATCH");
    print_rows(p, c, flash, unfused, cublas);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool quick = mode == "--quick";
    return run_benchmark("bench_task4", out, [&](BenchContext& ctx) {
        Bencher& b = ctx.bencher;
        const Ceilings& c = ctx.ceilings;
        fmt::print(out, "FLOPs = 4·B·H·S²·D (halved when causal); timing: events, device synchronised, L2 flushed, median\n");
        CublasGemm gemm;
        const std::vector<Shape4> course = {{4, 32, 128, 128, false}, {4, 32, 128, 128, true},
                                            {64, 32, 4096, 128, false}, {64, 32, 4096, 128, true}};
        for (const Shape4& s : course)
            if (!quick || s.S == 128) run_shape(b, c, gemm, s, true);
        fmt::print(out, "\n# the shapes of shared/bench/anchors_torch.py (torch SDPA fp32), for a side-by-side reading\n");
        run_shape(b, c, gemm, {4, 16, 4096, 128, false}, false);
        for (int S : {1024, 4096})
            for (bool causal : {false, true}) run_shape(b, c, gemm, {1, 8, S, 64, causal}, false);
    });
}
