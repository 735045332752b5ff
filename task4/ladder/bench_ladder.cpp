// bench_ladder.cpp — Task 4's optimisation ladder measured on one GPU, in one process (staff
// material): every step of task4/ladder/ checked against the harness's oracle on ragged shapes and
// against the reference at every timed shape, then timed with the project's Bencher (events,
// device synchronised, L2 flushed, median) beside the reference and the Task-2 pipeline.
//   make ladder-task4 IMPL=reference        (build/reference/bin/ladder_task4 [--quick])
// Shapes: the course's B=4 S=128 pair, the S=4096 pair at B=4 (1/16 of the course's batch, so the
// slow steps finish), and the course's B=64 S=4096 pair for the steps from the plan up.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "task2/task2.h"
#include "task4/ladder/ladder.h"
#include "task4/task4.h"

using namespace attn;

namespace {

constexpr size_t kScoresBudget = size_t(4) << 30;  // bytes of scores the unfused pipeline may use per slice

struct Shape {
    int B, H, Sq, Sk, D;
    bool causal;
    std::string name() const {
        return Sq == Sk ? fmt::format("B={} H={} S={} D={}{}", B, H, Sq, D, causal ? " causal" : "")
                        : fmt::format("B={} H={} Sq={} Sk={} D={}{}", B, H, Sq, Sk, D, causal ? " causal" : "");
    }
    double flops() const { return 4.0 * B * H * double(Sq) * Sk * D * (causal ? 0.5 : 1.0); }
    size_t nq() const { return size_t(B) * H * Sq * D; }
    size_t nk() const { return size_t(B) * H * Sk * D; }
};

struct Buffers {
    Shape s;
    DeviceBuffer<float> q, k, v, o, want;
    explicit Buffers(const Shape& sh) : s(sh), q(sh.nq()), k(sh.nk()), v(sh.nk()), o(sh.nq()), want(sh.nq()) {
        fill_normal(q.get(), s.nq(), 11), fill_normal(k.get(), s.nk(), 12), fill_normal(v.get(), s.nk(), 13);
    }
    void run(task4_ladder::Forward f) { f(q.get(), k.get(), v.get(), o.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal); }
};

// One ragged shape, every step against the cuBLAS oracle. Returns false on a mismatch.
bool check_ragged(CublasGemm& gemm, const Shape& s, const std::vector<task4_ladder::Step>& steps) {
    Buffers b(s);
    DeviceBuffer<float> scores(size_t(s.B) * s.H * s.Sq * s.Sk);
    attention_oracle(gemm, b.q.get(), b.k.get(), b.v.get(), b.want.get(), s.B * s.H, s.Sq, s.Sk, s.D, s.causal, scores.get());
    bool ok = true;
    for (const auto& st : steps) {
        b.o.poison();
        b.run(st.forward);
        CUDA_CHECK(cudaDeviceSynchronize());
        const GpuDiff d = gpu_compare(b.o.get(), b.want.get(), s.nq(), 2e-5, 1e-4);
        if (!d.ok()) {
            fmt::print("  MISMATCH {} at {}: {} outside, {} non-finite, max |diff| {:.2e}\n", st.name, s.name(), d.outside,
                       d.nonfinite, d.max_abs);
            ok = false;
        }
    }
    fmt::print("  checked every step at {}: {}\n", s.name(), ok ? "all agree with the oracle" : "MISMATCH");
    return ok;
}

double time_pipeline(Bencher& b, const Shape& s, Buffers& buf, BenchOptions opt) {
    const int BH = s.B * s.H;
    const int slice = int(std::max<size_t>(1, std::min<size_t>(size_t(BH), kScoresBudget / (size_t(s.Sq) * s.Sk * 4))));
    DeviceBuffer<float> scores(size_t(slice) * s.Sq * s.Sk);
    const size_t head = size_t(s.Sq) * s.D;
    return b
        .time(
            [&] {
                for (int h0 = 0; h0 < BH; h0 += slice)
                    task2::attention_heads(buf.q.get() + h0 * head, buf.k.get() + h0 * head, buf.v.get() + h0 * head,
                                           buf.want.get() + h0 * head, std::min(slice, BH - h0), s.Sq, s.D, s.causal,
                                           scores.get());
            },
            opt)
        .median_ms;
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    return run_benchmark("ladder_task4", stdout, [&](BenchContext& ctx) {
        Bencher& bench = ctx.bencher;
        const Ceilings& c = ctx.ceilings;
        CublasGemm gemm;
        const auto steps = task4_ladder::steps();
        bool ok = true;
        for (const Shape& s : std::vector<Shape>{{1, 2, 129, 129, 64, true}, {1, 1, 1, 1, 32, false}, {2, 3, 77, 200, 96, true},
                                                 {1, 2, 127, 127, 128, false}, {1, 1, 300, 100, 64, true}, {1, 2, 513, 513, 128, true}})
            ok = check_ragged(gemm, s, steps) && ok;

        std::vector<Shape> shapes = {{4, 32, 128, 128, 128, false}, {4, 32, 128, 128, 128, true},
                                     {4, 32, 4096, 4096, 128, false}, {4, 32, 4096, 4096, 128, true}};
        if (!quick) shapes.push_back({64, 32, 4096, 4096, 128, false}), shapes.push_back({64, 32, 4096, 4096, 128, true});
        nlohmann::json doc = nlohmann::json::array();
        for (const Shape& s : shapes) {
            Buffers buf(s);
            const bool course_large = s.B == 64;
            const BenchOptions opt = s.flops() > 2e12 ? BenchOptions{1, 3, true} : s.flops() > 1e11 ? BenchOptions{1, 5, true}
                                                                                                   : BenchOptions{3, 20, true};
            const double ref = bench.time([&] { buf.run(task4::flash_attention_forward); }, opt).median_ms;
            CUDA_CHECK(cudaMemcpy(buf.want.get(), buf.o.get(), buf.o.bytes(), cudaMemcpyDeviceToDevice));
            DeviceBuffer<float> ref_out(s.nq());
            CUDA_CHECK(cudaMemcpy(ref_out.get(), buf.o.get(), buf.o.bytes(), cudaMemcpyDeviceToDevice));
            const double pipe = time_pipeline(bench, s, buf, opt);
            fmt::print("\n{}   reference {:.3f} ms ({:.1f} TFLOP/s), task-2 pipeline {:.3f} ms ({:.1f} TFLOP/s)\n", s.name(), ref,
                       s.flops() / (ref * 1e9), pipe, s.flops() / (pipe * 1e9));
            fmt::print("  {:<20} {:>10} {:>8} {:>7} {:>9} {:>9} {:>9}\n", "step", "ms", "TFLOP/s", "%SGEMM", "x prev", "x ref",
                       "vs pipe");
            double prev = 0;
            for (const auto& st : steps) {
                if (course_large && (st.name == "old plan" || st.name == "no padding")) continue;  // minutes per call
                buf.o.poison();
                const double ms = bench.time([&] { buf.run(st.forward); }, opt).median_ms;
                const GpuDiff d = gpu_compare(buf.o.get(), ref_out.get(), s.nq(), 2e-5, 1e-4);
                ok = ok && d.ok();
                const double tf = s.flops() / (ms * 1e9);
                fmt::print("  {:<20} {:>10.3f} {:>8.2f} {:>6.0f}% {:>9} {:>8.2f}x {:>8.2f}x{}\n", st.name, ms, tf,
                           100 * tf / c.sgemm_tflops, prev > 0 ? fmt::format("{:.2f}x", prev / ms) : "", ms / ref, pipe / ms,
                           d.ok() ? "" : "  MISMATCH");
                doc.push_back({{"shape", s.name()}, {"step", st.name}, {"ms", ms}, {"tflops", tf}, {"ref_ms", ref},
                               {"pipeline_ms", pipe}, {"ok", d.ok()}});
                prev = ms;
            }
        }
        fmt::print("\nJSON {}\n", nlohmann::json{{"gpu", ctx.device.name}, {"sgemm_tflops", c.sgemm_tflops},
                                               {"copy_gbps", c.copy_gbps}, {"rows", doc}}.dump());
        if (!ok) throw std::runtime_error("a ladder step disagreed with the oracle or the reference");
    });
}
