// bench_task4_backward.cpp — Task 4's backward bonus on one GPU: TFLOP/s of flash_attention_backward at the course's
// shapes, B=4 H=32 S=128 D=128 and B=64 H=32 S=4096 D=128, causal and not (the forward with lse beside it), every
// kernel's output checked against the float64 oracle of common/cuda/backward_oracle.h (every head at S=128, two heads at
// S=4096). FLOPs = 2.5 × the forward's 4·B·H·S²·D (the backward's five products of S×S×D: S and dP, dV, dK, dQ),
// halved when causal; timing: events, device synchronised, L2 flushed, warm-up, median (common/cuda/bench.h).
//   make bench-task4-backward [IMPL=reference] [ARGS="--quick"]     your kernel (or the model solution)
//   make ladder-task4-backward [ARGS="--quick"]                      every rung of task4_backward/ladder (course staff)
// --quick: the S=128 shapes only. tools/vs_torch/sdpa_backward.py times torch's float32 SDPA backward (math, efficient) at the
// same shapes, for the side-by-side table of docs/perf.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "common/cuda/backward_oracle.h"
#include "task4_backward/task4_backward.h"
#ifdef ATTNLAB_BACKWARD_LADDER
#include "task4_backward/ladder/ladder_backward.h"
#endif

using namespace attn;

namespace {

FILE* out = stdout;

struct Shape4 {
    int B, H, S, D;
    bool causal;
    std::string name() const { return fmt::format("B={} H={} S={} D={}{}", B, H, S, D, causal ? " causal" : ""); }
    double fwd_flops() const { return 4.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0); }
    double bwd_flops() const { return 2.5 * fwd_flops(); }
};

using Backward = std::function<void(const float*, const float*, const float*, const float*, const float*, const float*,
                                    float*, float*, float*, int, int, int, int, int, bool)>;
struct Kernel {
    std::string name;
    Backward fn;
    int max_S = 1 << 30;  // a rung too slow for longer rows is not timed there
};

// The tests' tolerance (task4/README.md): |got − want| ≤ atol + rtol·|want|.
constexpr double kAtol = 2e-5, kRtol = 1e-4;

void run_shape(Bencher& b, const Ceilings& c, const Shape4& s, const std::vector<Kernel>& kernels) {
    const size_t head = size_t(s.S) * s.D, n = size_t(s.B) * s.H * head, nl = size_t(s.B) * s.H * s.S;
    DeviceBuffer<float> q(n), k(n), v(n), g(n), o(n), lse(nl), dq(n), dk(n), dv(n);
    fill_normal(q.get(), n, 21), fill_normal(k.get(), n, 22), fill_normal(v.get(), n, 23), fill_normal(g.get(), n, 24);
    const double scores = double(s.S) * s.S * s.B * s.H;
    const bool all_heads = scores <= 1.1e8;  // the float64 oracle on every head, else on the first and the last
    const BenchOptions opt = scores > 4e9 ? BenchOptions{1, 3, true} : scores > 1.1e8 ? BenchOptions{2, 10, true} : BenchOptions{3, 20, true};
    fmt::print(out, "\n{}   (checked against the float64 oracle: {}; tolerance |diff| <= {} + {}*|want|)\n", s.name(),
               all_heads ? "every head" : "heads 0 and B·H−1", kAtol, kRtol);
    // the forward with lse: its O and lse are the backward's inputs
    const Timing tf = b.time([&] {
        task4::flash_attention_forward_lse(q.get(), k.get(), v.get(), o.get(), lse.get(), s.B, s.H, s.S, s.S, s.D, s.causal);
    }, opt);
    fmt::print(out, "  {}\n", perf_line("forward with lse (flash_attention_forward_lse)", tf, s.fwd_flops(), 0, c));
    // the oracle's gradients of the checked heads
    std::vector<int> heads;
    if (!all_heads) heads = {0, s.B * s.H - 1};
    else for (int h = 0; h < s.B * s.H; ++h) heads.push_back(h);
    const size_t nh = heads.size() * head;
    DeviceBuffer<float> wo(nh), wl(heads.size() * s.S), wq(nh), wk(nh), wv(nh), gq(nh), gk(nh), gv(nh);
    auto gather = [&](const float* src, float* dst) {
        for (size_t i = 0; i < heads.size(); ++i)
            CUDA_CHECK(cudaMemcpy(dst + i * head, src + size_t(heads[i]) * head, head * 4, cudaMemcpyDeviceToDevice));
    };
    {
        DeviceBuffer<float> hq(nh), hk(nh), hv(nh), hg(nh);
        gather(q.get(), hq.get()), gather(k.get(), hk.get()), gather(v.get(), hv.get()), gather(g.get(), hg.get());
        task4::attention_backward_f64_gpu(hq.get(), hk.get(), hv.get(), hg.get(), wo.get(), wl.get(), wq.get(), wk.get(), wv.get(),
                                          int(heads.size()), s.S, s.S, s.D, s.causal);
    }
    for (const Kernel& kn : kernels) {
        if (s.S > kn.max_S) {
            fmt::print(out, "  {:<44} not timed at S={} (too slow; see the shapes above)\n", kn.name, s.S);
            continue;
        }
        auto call = [&] { kn.fn(q.get(), k.get(), v.get(), o.get(), g.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B, s.H, s.S, s.S, s.D, s.causal); };
        for (auto* t : {&dq, &dk, &dv}) t->poison();
        call();
        CUDA_CHECK(cudaDeviceSynchronize());
        GpuDiff worst;
        std::string bad;
        for (const auto& [name, got, want] : {std::tuple{"dQ", &dq, &wq}, std::tuple{"dK", &dk, &wk}, std::tuple{"dV", &dv, &wv}}) {
            DeviceBuffer<float>& tmp = std::string(name) == "dQ" ? gq : std::string(name) == "dK" ? gk : gv;
            gather(got->get(), tmp.get());
            const GpuDiff d = gpu_compare(tmp.get(), want->get(), nh, kAtol, kRtol);
            worst.max_abs = std::max(worst.max_abs, d.max_abs);
            if (!d.ok()) bad += fmt::format(" {}: {} outside, {} NaN/Inf;", name, d.outside, d.nonfinite);
        }
        const Timing t = b.time(call, opt);
        fmt::print(out, "  {}   max|diff| {:.1e}  {}\n", perf_line(kn.name, t, s.bwd_flops(), 0, c), worst.max_abs,
                   bad.empty() ? "ok" : "MISMATCH" + bad);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    return run_benchmark("bench_task4_backward", out, [&](BenchContext& ctx) {
        fmt::print(out, "backward FLOPs = 2.5 x 4·B·H·S²·D (halved when causal); timing: events, device synchronised, L2 flushed, "
                        "median\n");
        std::vector<Kernel> kernels;
        std::vector<Shape4> shapes;
#ifdef ATTNLAB_BACKWARD_LADDER
        for (const auto& rung : task4::ladder_backward::rungs()) kernels.push_back({rung.name, rung.fn, rung.max_S});
        for (bool causal : {false, true}) shapes.push_back({4, 32, 128, 128, causal});  // the course's small shape
        for (int S : {1024, 4096})
            for (bool causal : {false, true})
                if (!quick || S == 1024) shapes.push_back({4, 16, S, 128, causal});
#else
        kernels.push_back({"flash_attention_backward", task4::flash_attention_backward});
        for (bool causal : {false, true}) shapes.push_back({4, 32, 128, 128, causal});
        if (!quick)
            for (bool causal : {false, true}) shapes.push_back({64, 32, 4096, 128, causal});
#endif
        for (const Shape4& s : shapes) run_shape(ctx.bencher, ctx.ceilings, s, kernels);
    });
}
