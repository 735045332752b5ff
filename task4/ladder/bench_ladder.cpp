// bench_ladder.cpp — Task 4's optimisation ladder measured on one GPU, in one process (staff
// material): every step of task4/ladder/ checked against the harness's oracle on ragged shapes and
// against the reference at every timed shape, then timed with the project's Bencher (events,
// device synchronised, L2 flushed, median) beside the reference and the Task-2 pipeline.
//   make ladder-task4 IMPL=reference        (build/reference/bin/ladder_task4 [--quick] [--top] [--check])
// Shapes: the course's B=4 S=128 pair, the S=4096 pair at B=4 (1/16 of the course's batch, so the
// slow steps finish), and the course's B=64 S=4096 pair for the steps from the plan up. --check: the ragged
// shapes only (for compute-sanitizer).
// --top: the reference and the 3xTF32 rungs only (flash_tf32.cuh), and two more tables:
//   accuracy   each one's output against attention in float64 on the same inputs (accuracy_f64.cuh): max |diff|
//              and relative L2, on the ragged shapes and the course's (at S=4096: 8 heads, every 32nd row)
//   stream     each timed the way tools/vs_torch/torch_course_shapes.py --stream times torch: CUDA events recorded on the
//              stream around one call, behind a 512 MB write that flushes L2 and covers the host's launch, no host
//              synchronisation between them; median. The same method on both sides, for a side-by-side reading
//              at the small shapes, where launch costs are a large part of the Bencher's time.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
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
    // o against float64: every row of every head for small shapes, else 8 heads from the middle, every 32nd row
    task4_ladder::ErrorStats error() const {
        const int BH = s.B * s.H;
        const bool big = size_t(BH) * s.Sq * s.Sk > (size_t(1) << 28);
        const int nh = big ? std::min(8, BH) : BH, h0 = big ? BH / 2 - nh / 2 : 0;
        return task4_ladder::error_vs_f64(q.get(), k.get(), v.get(), o.get(), s.Sq, s.Sk, s.D, s.causal, h0, nh, big ? 32 : 1);
    }
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

// The stream method (see the header): GPU time of one call, the host's launch hidden behind the flush.
class StreamTimer {
public:
    StreamTimer() : flush_(size_t(512) << 20) {}
    double median_ms(const std::function<void()>& fn, int warmup, int reps) {
        for (int i = 0; i < warmup; ++i) fn();
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<cudaEvent_t> ev(2 * reps);
        for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
        for (int i = 0; i < reps; ++i) {
            CUDA_CHECK(cudaMemsetAsync(flush_.get(), i & 0xff, flush_.bytes()));
            CUDA_CHECK(cudaEventRecord(ev[2 * i]));
            fn();
            CUDA_CHECK(cudaEventRecord(ev[2 * i + 1]));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<double> ms;
        for (int i = 0; i < reps; ++i) {
            float t = 0;
            CUDA_CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
            ms.push_back(t);
        }
        for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
        std::sort(ms.begin(), ms.end());
        return reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    }

private:
    DeviceBuffer<char> flush_;
};

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, top = false, check_only = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--top") == 0) top = true;
        else if (std::strcmp(argv[i], "--check") == 0) check_only = true;
        else {
            fmt::print(stderr, "usage: ladder_task4 [--quick] [--top] [--check]   (--check: the ragged shapes only)\n");
            return 2;
        }
    }
    return run_benchmark("ladder_task4", stdout, [&](BenchContext& ctx) {
        Bencher& bench = ctx.bencher;
        const Ceilings& c = ctx.ceilings;
        CublasGemm gemm;
        std::vector<task4_ladder::Step> steps = task4_ladder::steps();
        if (top) {
            steps.erase(std::remove_if(steps.begin(), steps.end(), [](const auto& st) { return !st.tensor_cores; }), steps.end());
            steps.insert(steps.begin(), {"reference", "task4/reference (FFMA)", task4::flash_attention_forward, false});
        }
        bool ok = true;
        const std::vector<Shape> ragged = {{1, 2, 129, 129, 64, true},   {1, 1, 1, 1, 32, false},     {2, 3, 77, 200, 96, true},
                                           {1, 2, 127, 127, 128, false}, {1, 1, 300, 100, 64, true},  {1, 2, 513, 513, 128, true},
                                           {2, 2, 1, 1, 128, true},      {1, 3, 129, 129, 96, false}, {1, 2, 127, 127, 32, true},
                                           {1, 2, 300, 100, 128, true},  {2, 2, 100, 300, 128, false}, {1, 2, 1000, 1000, 64, true},
                                           {1, 1, 1, 700, 128, false},   {1, 2, 129, 129, 128, true}};
        for (const Shape& s : ragged) ok = check_ragged(gemm, s, steps) && ok;
        if (check_only) {
            if (!ok) throw std::runtime_error("a ladder step disagreed with the oracle");
            return;
        }

        nlohmann::json doc = nlohmann::json::array(), acc = nlohmann::json::array();
        if (top) {
            fmt::print("\nAccuracy against float64 on the same inputs (max |diff|, relative L2)\n");
            for (const Shape& s : ragged) {
                Buffers b(s);
                std::string line = fmt::format("  {:<34}", s.name());
                for (const auto& st : steps) {
                    b.o.poison();
                    b.run(st.forward);
                    const auto e = b.error();
                    line += fmt::format(" | {} {:.1e} {:.1e}", st.name, e.max_abs, e.rel_l2);
                    acc.push_back({{"shape", s.name()}, {"step", st.name}, {"max_abs", e.max_abs}, {"rel_l2", e.rel_l2}});
                }
                fmt::print("{}\n", line);
            }
        }

        std::vector<Shape> shapes = {{4, 32, 128, 128, 128, false}, {4, 32, 128, 128, 128, true},
                                     {4, 32, 4096, 4096, 128, false}, {4, 32, 4096, 4096, 128, true}};
        if (!quick) shapes.push_back({64, 32, 4096, 4096, 128, false}), shapes.push_back({64, 32, 4096, 4096, 128, true});
        StreamTimer stream;
        std::map<bool, std::vector<std::pair<double, std::string>>> tf32_at_b4;  // --top: causal → (ms, step) at B=4 S=4096
        for (const Shape& s : shapes) {
            Buffers buf(s);
            const bool course_large = s.B == 64;
            const BenchOptions opt = s.flops() > 2e12 ? BenchOptions{1, 3, true} : s.flops() > 1e11 ? BenchOptions{1, 5, true}
                                                                                                   : BenchOptions{3, 20, true};
            const double ref = bench.time([&] { buf.run(task4::flash_attention_forward); }, opt).median_ms;
            DeviceBuffer<float> ref_out(s.nq());
            CUDA_CHECK(cudaMemcpy(ref_out.get(), buf.o.get(), buf.o.bytes(), cudaMemcpyDeviceToDevice));
            const double pipe = top ? 0.0 : time_pipeline(bench, s, buf, opt);
            fmt::print("\n{}   reference {:.3f} ms ({:.1f} TFLOP/s){}\n", s.name(), ref, s.flops() / (ref * 1e9),
                       top ? "" : fmt::format(", task-2 pipeline {:.3f} ms ({:.1f} TFLOP/s)", pipe, s.flops() / (pipe * 1e9)));
            fmt::print("  {:<20} {:>10} {:>8} {:>7} {:>9} {:>9} {:>9}{}\n", "step", "ms", "TFLOP/s", "%SGEMM", "x prev", "x ref",
                       top ? "" : "vs pipe", top ? "  stream ms   err vs f64 (max, rel L2)" : "");
            double prev = 0;
            for (const auto& st : steps) {
                if (course_large && (st.name == "old plan" || st.name == "no padding")) continue;  // minutes per call
                if (top && course_large && st.tensor_cores && st.name != "3xTF32") {
                    // the top rung, and of the others only the two fastest at B=4 S=4096 (same masking): minutes otherwise
                    auto& v = tf32_at_b4[s.causal];
                    std::sort(v.begin(), v.end());
                    bool keep = false;
                    for (size_t i = 0; i < v.size() && i < 2; ++i) keep = keep || v[i].second == st.name;
                    if (!keep) continue;
                }
                buf.o.poison();
                const double ms = bench.time([&] { buf.run(st.forward); }, opt).median_ms;
                const GpuDiff d = gpu_compare(buf.o.get(), ref_out.get(), s.nq(), 2e-5, 1e-4);
                ok = ok && d.ok();
                const double tf = s.flops() / (ms * 1e9);
                std::string extra;
                nlohmann::json row = {{"shape", s.name()}, {"step", st.name}, {"ms", ms}, {"tflops", tf}, {"ref_ms", ref},
                                      {"ok", d.ok()}};
                if (top) {
                    const auto e = buf.error();
                    const int reps = s.flops() > 2e12 ? 3 : s.flops() > 1e11 ? 5 : 50;
                    const double sms = stream.median_ms([&] { buf.run(st.forward); }, reps > 5 ? 5 : 1, reps);
                    extra = fmt::format("  {:>9.4f}   {:.1e} {:.1e}", sms, e.max_abs, e.rel_l2);
                    row["stream_ms"] = sms, row["max_abs"] = e.max_abs, row["rel_l2"] = e.rel_l2;
                } else {
                    extra = fmt::format(" {:>8.2f}x", pipe / ms);
                    row["pipeline_ms"] = pipe;
                }
                fmt::print("  {:<20} {:>10.3f} {:>8.2f} {:>6.0f}% {:>9} {:>8.2f}x{}{}\n", st.name, ms, tf, 100 * tf / c.sgemm_tflops,
                           prev > 0 ? fmt::format("{:.2f}x", prev / ms) : "", ms / ref, extra, d.ok() ? "" : "  MISMATCH");
                doc.push_back(row);
                prev = ms;
                if (top && st.tensor_cores && st.name != "3xTF32" && s.B == 4 && s.Sq == 4096) tf32_at_b4[s.causal].push_back({ms, st.name});
            }
        }
        fmt::print("\nJSON {}\n", nlohmann::json{{"gpu", ctx.device.name}, {"sgemm_tflops", c.sgemm_tflops},
                                               {"copy_gbps", c.copy_gbps}, {"rows", doc}, {"accuracy", acc}}.dump());
        if (!ok) throw std::runtime_error("a ladder step disagreed with the oracle or the reference");
    });
}
