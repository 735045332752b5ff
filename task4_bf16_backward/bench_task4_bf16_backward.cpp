// bench_task4_bf16_backward.cpp — Task 4's bf16 backward bonus (4d) on one GPU: TFLOP/s of flash_attention_backward_bf16
// at the shapes of torch's and FlashAttention-4's anchors (16k or 64k tokens a batch; head_dim 128 and 64; causal and
// not), each call's gradients checked on two heads (the first and the last) against the float64 oracle of
// common/cuda/backward_oracle.h on the same bf16-rounded inputs. FLOPs = 2.5 × the forward's 4·B·H·S²·D (the five
// products of S×S×D: S and dP, dV, dK, dQ), halved when causal; timing: events, L2 flushed, warm-up, median, GPU time
// only: the launches queued behind a GPU wait, as tools/vs_torch/event_timing.py times torch's libraries
// (common/cuda/bench.h, overlap_host; ATTNLAB_TIMING_HIDE_HOST=0: host work past the flush counted).
//   make bench-task4-bf16-backward [IMPL=reference] [ARGS="--quick"]    your kernel (or the model solution)
// --quick: S = 1024 only; --shape=B,H,S,D (repeatable): those shapes instead, causal and not (D 32, 64 or 128).
// tools/vs_torch/sdpa_bf16_backward.py times torch's bf16 backwards (cuDNN, FlashAttention-2)
// at the same shapes, for the side-by-side table of docs/perf.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cuda/backward_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/bench_shapes.h"
#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"  // fill_normal
#include "common/cuda/gpu_compare.h"
#include "task4_bf16_backward/task4_bf16_backward.h"

using namespace attn;
using task4::bf16_convert::from_bf16;
using task4::bf16_convert::to_bf16;

namespace {

FILE* out = stdout;
constexpr double kAtol = 2e-2, kRtol = 2e-2;  // the tests' element-wise tolerance (README)

void run_shape(Bencher& b, const Ceilings& c, const BenchShape& s, bool quick) {
    const size_t head = size_t(s.S) * s.D, n = size_t(s.B) * s.H * head, rows = size_t(s.B) * s.H * s.S;
    DeviceBuffer<float> f(n), qf(n), kf(n), vf(n), gf(n), lse(rows);
    DeviceBuffer<__nv_bfloat16> q(n), k(n), v(n), o(n), g(n), dq(n), dk(n), dv(n);
    fill_normal(f.get(), n, 31), to_bf16(f.get(), q.get(), qf.get(), n);
    fill_normal(f.get(), n, 32), to_bf16(f.get(), k.get(), kf.get(), n);
    fill_normal(f.get(), n, 33), to_bf16(f.get(), v.get(), vf.get(), n);
    fill_normal(f.get(), n, 34), to_bf16(f.get(), g.get(), gf.get(), n);
    task4::attention_lse_f32_gpu(qf.get(), kf.get(), lse.get(), s.B * s.H, s.S, s.S, s.D, s.causal);
    CUDA_CHECK(cudaMemset(o.get(), 0, n * 2));  // O only enters δ; the checked heads get the oracle's
    // The float64 oracle on the first and the last head: their O and lse replace the ones above, their gradients are
    // what the kernel's must match.
    const int heads[2] = {0, s.B * s.H - 1};
    DeviceBuffer<float> wo(head), wl(size_t(s.S));
    std::vector<DeviceBuffer<float>> want;  // [head i][dQ, dK, dV]
    for (int i = 0; i < 6; ++i) want.emplace_back(head);
    DeviceBuffer<__nv_bfloat16> ob(head);
    for (int i = 0; i < 2; ++i) {
        const size_t at = size_t(heads[i]) * head;
        task4::attention_backward_f64_gpu(qf.get() + at, kf.get() + at, vf.get() + at, gf.get() + at, wo.get(), wl.get(),
                                          want[3 * i].get(), want[3 * i + 1].get(), want[3 * i + 2].get(), 1, s.S, s.S, s.D, s.causal);
        to_bf16(wo.get(), ob.get(), nullptr, head);
        CUDA_CHECK(cudaMemcpy(o.get() + at, ob.get(), head * 2, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaMemcpy(lse.get() + size_t(heads[i]) * s.S, wl.get(), size_t(s.S) * 4, cudaMemcpyDeviceToDevice));
    }
    auto call = [&] {
        task4::flash_attention_backward_bf16(q.get(), k.get(), v.get(), o.get(), g.get(), lse.get(), dq.get(), dk.get(), dv.get(), s.B,
                                             s.H, s.S, s.S, s.D, s.causal);
    };
    for (auto* t : {&dq, &dk, &dv}) CUDA_CHECK(cudaMemset(t->get(), 0xff, n * 2));  // NaN: unwritten elements fail
    call();
    CUDA_CHECK(cudaDeviceSynchronize());
    DeviceBuffer<float> got(head);
    double worst = 0;
    std::string bad;
    for (int i = 0; i < 2; ++i)
        for (int gi = 0; gi < 3; ++gi) {
            const __nv_bfloat16* grad = (gi == 0 ? dq : gi == 1 ? dk : dv).get() + size_t(heads[i]) * head;
            from_bf16(grad, got.get(), head);
            const GpuDiff d = gpu_compare(got.get(), want[3 * i + gi].get(), head, kAtol, kRtol);
            worst = std::max(worst, d.max_abs);
            if (!d.ok()) bad += fmt::format(" head {} d{}: {} outside, {} NaN/Inf;", heads[i], "QKV"[gi], d.outside, d.nonfinite);
        }
    const BenchOptions opt = quick ? BenchOptions{1, 3, true, true} : BenchOptions{3, 10, true, true};  // GPU time, as torch's
    const Timing t = b.time(call, opt);
    fmt::print(out, "  {}   max|diff| {:.1e}  {}\n", perf_line(s.name(), t, 2.5 * s.forward_flops(), 0, c), worst,
               bad.empty() ? "ok" : "MISMATCH" + bad);
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::vector<BenchShape> listed;  // --shape=B,H,S,D: these instead of the anchors' shapes
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        quick |= a == "--quick";
        if (a.rfind("--shape=", 0) == 0) {
            const std::optional<BenchShape> s = parse_shape_arg(a, {32, 64, 128});
            if (!s) {
                fmt::print(stderr, "bench_task4_bf16_backward: --shape=B,H,S,D takes four positive integers, D 32, 64 or 128 (got '{}')\n", a);
                return 2;
            }
            listed.push_back(*s);
        }
    }
    if (listed.empty())
        for (const BenchShape& s : kAnchorShapes)
            if (!quick || s.S == 1024) listed.push_back(s);
    return run_benchmark("bench_task4_bf16_backward", out, [&](BenchContext& ctx) {
        fmt::print(out, "flash_attention_backward_bf16: FLOPs = 2.5 x 4·B·H·S²·D (halved when causal); timing: events, L2 "
                        "flushed, median of 10 after 3, {}; checked on heads 0 and B·H−1 against float64 "
                        "(|diff| <= {} + {}*|want|)\n", overlap_timing_words(), kAtol, kRtol);
        for (BenchShape s : listed)
            for (bool causal : {false, true}) s.causal = causal, run_shape(ctx.bencher, ctx.ceilings, s, quick);
    });
}
