// bench_task4_bf16.cpp — Task 4's bf16 bonus on one GPU: TFLOP/s of flash_attention_forward_bf16 at the shapes
// of the torch anchors (B=4, H=16, S=4096 and 1024, D=128 and 64, causal and not), each output checked
// against the harness's fp32 cuBLAS attention on the same bf16-rounded inputs. FLOPs = 4·B·H·S²·D (halved
// when causal); timing: events, L2 flushed, median, GPU time only: the launches queued behind a GPU wait, as
// tools/vs_torch/event_timing.py times torch's libraries (common/cuda/bench.h, overlap_host; ATTNLAB_TIMING_HIDE_HOST=0:
// host work past the flush counted).
//   make bench-task4-bf16 [IMPL=reference] [ARGS="--quick"]     your kernel (or the model solution)
//   make ladder-task4-bf16 [ARGS="--quick"]                      every rung of task4_bf16/ladder (course staff)
// --quick: the S=1024 shapes only, fewer repetitions; --one: S=4096 D=128 non-causal only (for ncu); --grid: the shapes
// of the backward's benchmark and FlashAttention-4's anchors instead (B·H·S·D = 16·16·1024·128 … 1·32·16384·64);
// --shape=B,H,S,D (repeatable): those shapes instead, causal and not; the ladder's
// --only=4,9: the rungs whose name starts with one of these words (one process per rung: a failing rung hides none).
// tools/vs_torch/sdpa_bf16.py times torch's SDPA backends (flash, cuDNN, efficient) at the same shapes, for the
// side-by-side table of docs/perf.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/bench_shapes.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "task4_bf16/task4_bf16.h"
#include "common/cuda/bf16_convert.h"
#ifdef ATTNLAB_BF16_LADDER
#include "task4_bf16/ladder/ladder_bf16.h"
#endif

using namespace attn;

namespace {

FILE* out = stdout;
using task4::bf16_convert::from_bf16;
using task4::bf16_convert::to_bf16;

using Forward = std::function<void(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*,
                                   int, int, int, int, int, bool)>;
struct Kernel {
    std::string name;
    Forward fn;
};

// The tolerance of the bonus's tests (task4/README.md): |got − want| ≤ atol + rtol·|want|.
constexpr double kAtol = 4e-3, kRtol = 1.6e-2;

void run_shape(Bencher& b, const Ceilings& c, CublasGemm& gemm, const BenchShape& s, const std::vector<Kernel>& kernels,
               bool quick) {
    const size_t n = size_t(s.B) * s.H * s.S * s.D, head = size_t(s.S) * s.D;
    DeviceBuffer<float> f(n), qf(n), kf(n), vf(n), want(n), got(n);
    DeviceBuffer<__nv_bfloat16> q(n), k(n), v(n), o(n);
    fill_normal(f.get(), n, 11), to_bf16(f.get(), q.get(), qf.get(), n);
    fill_normal(f.get(), n, 12), to_bf16(f.get(), k.get(), kf.get(), n);
    fill_normal(f.get(), n, 13), to_bf16(f.get(), v.get(), vf.get(), n);
    {  // the oracle in fp32 on the bf16-rounded inputs, over slices of heads (S×S scores of 4 GB at most)
        const int BH = s.B * s.H, slice = int(std::max<size_t>(1, std::min<size_t>(BH, (size_t(4) << 30) / (size_t(s.S) * s.S * 4))));
        DeviceBuffer<float> scores(size_t(slice) * s.S * s.S);
        for (int h0 = 0; h0 < BH; h0 += slice)
            attention_oracle(gemm, qf.get() + h0 * head, kf.get() + h0 * head, vf.get() + h0 * head, want.get() + h0 * head,
                             std::min(slice, BH - h0), s.S, s.S, s.D, s.causal, scores.get());
    }
    std::vector<float> w = want.download();
    double ref2 = 0;
    for (float x : w) ref2 += double(x) * x;
    fmt::print(out, "\n{}   (tolerance |diff| <= {} + {}*|want| against fp32 cuBLAS attention on the bf16 inputs)\n",
               s.name(), kAtol, kRtol);
    const BenchOptions opt = quick ? BenchOptions{1, 3, true, true} : BenchOptions{2, 10, true, true};  // GPU time, as torch's
    for (const Kernel& kn : kernels) {
        CUDA_CHECK(cudaMemset(o.get(), 0xff, n * 2));  // NaN: unwritten elements fail
        kn.fn(q.get(), k.get(), v.get(), o.get(), s.B, s.H, s.S, s.S, s.D, s.causal);
        CUDA_CHECK(cudaDeviceSynchronize());
        from_bf16(o.get(), got.get(), n);
        const GpuDiff d = gpu_compare(got.get(), want.get(), n, kAtol, kRtol);
        std::vector<float> g = got.download();
        double e2 = 0;
        for (size_t i = 0; i < n; ++i) e2 += double(g[i] - w[i]) * (g[i] - w[i]);
        const Timing t = b.time([&] { kn.fn(q.get(), k.get(), v.get(), o.get(), s.B, s.H, s.S, s.S, s.D, s.causal); }, opt);
        fmt::print(out, "  {}   {:6.1f} TFLOP/s   rel L2 {:.1e}  max|diff| {:.1e}  {}\n", perf_line(kn.name, t, s.forward_flops(), 0, c),
                   s.forward_flops() / t.median_ms / 1e9, std::sqrt(e2 / ref2), d.max_abs,
                   d.ok() ? "ok" : fmt::format("MISMATCH ({} outside, {} NaN/Inf)", d.outside, d.nonfinite));
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, one = false, grid = false;  // --one: S=4096 D=128 only (for a profiler); --grid: the anchors' shapes
    std::string only;                 // --only=6,9a: the kernels whose name starts with one of these words
    std::vector<BenchShape> custom;       // --shape=B,H,S,D (repeatable): these shapes instead, causal and not
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        quick |= a == "--quick", one |= a == "--one", grid |= a == "--grid";
        if (a.rfind("--only=", 0) == 0) only = "," + a.substr(7) + ",";
        if (a.rfind("--shape=", 0) == 0) {
            const std::optional<BenchShape> s = attn::parse_shape_arg(a, {64, 128});
            if (!s) {
                fmt::print(stderr, "bench_task4_bf16: --shape=B,H,S,D takes four positive integers, D 64 or 128 (got '{}')\n", a);
                return 2;
            }
            custom.push_back(*s);
        }
    }
    return run_benchmark("bench_task4_bf16", out, [&](BenchContext& ctx) {
        fmt::print(out, "FLOPs = 4·B·H·S²·D (halved when causal); timing: events, L2 flushed, median, {}\n", overlap_timing_words());
        CublasGemm gemm;
        std::vector<Kernel> kernels;
#ifdef ATTNLAB_BF16_LADDER
        using namespace task4;
        kernels.push_back({"1 wmma (the skeleton's plan)", ladder_bf16::wmma_forward});
        kernels.push_back({"2 mma.sync+ldmatrix, 4 warps", [](auto... a) {
                               auto t = std::make_tuple(a...);
                               (std::get<8>(t) == 64 ? bf16_detail::launch<64, 4, 64, false> : bf16_detail::launch<128, 4, 64, false>)(
                                   std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t), std::get<4>(t),
                                   std::get<5>(t), std::get<6>(t), std::get<7>(t), std::get<9>(t));
                           }});
        kernels.push_back({"3 + swizzle, cp.async x2, 8 warps", [](auto... a) {
                               auto t = std::make_tuple(a...);
                               (std::get<8>(t) == 64 ? bf16_detail::launch<64, 8, 64, true> : bf16_detail::launch<128, 8, 64, true>)(
                                   std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t), std::get<4>(t),
                                   std::get<5>(t), std::get<6>(t), std::get<7>(t), std::get<9>(t));
                           }});
        kernels.push_back({"3 + swizzle, cp.async x2, 4 warps", [](auto... a) {
                               auto t = std::make_tuple(a...);
                               (std::get<8>(t) == 64 ? bf16_detail::launch<64, 4, 64, true> : bf16_detail::launch<128, 4, 64, true>)(
                                   std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t), std::get<4>(t),
                                   std::get<5>(t), std::get<6>(t), std::get<7>(t), std::get<9>(t));
                           }});
#define RUNG4(NAME, W128, W64, LAZY)                                                                         \
    kernels.push_back({NAME, [](const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, \
                                int B, int H, int Sq, int Sk, int D, bool causal) {                                   \
                           (D == 64 ? bf16_detail::launch_fa2<64, W64, 2, 64, true, LAZY>                             \
                                    : bf16_detail::launch_fa2<128, W128, 2, 64, false, LAZY>)(q, k, v, o, B, H, Sq, Sk, causal, nullptr); \
                       }})
        RUNG4("4 FA2 layout: 4 warps x 32 rows, Bc 64", 4, 4, false);
        RUNG4("5 + rescale only on a new max, tree reductions", 4, 4, true);
        RUNG4("5, 8 warps x 32 rows", 8, 8, true);
#undef RUNG4
        if (ladder_bf16::hopper_rungs_available()) {  // sm_90a, compute capability 9.0
            kernels.push_back({"6 wgmma, 2 warpgroups x 64 rows, Bc 128, cp.async", ladder_bf16::wgmma_forward});
            kernels.push_back({"7 + TMA, mbarrier stages", ladder_bf16::tma_forward});
            kernels.push_back({"8 + producer warpgroup, setmaxnreg", ladder_bf16::warp_specialized_forward});
            kernels.push_back({"9a ping-pong, no intra-warpgroup overlap", ladder_bf16::pingpong_no_overlap_forward});
            kernels.push_back({"9 ping-pong + next QK before softmax", ladder_bf16::pingpong_forward});
            kernels.push_back({"9b rung 9, Bc 176", ladder_bf16::pingpong_bc176_forward});
            kernels.push_back({"9c rung 9, one more K/V stage", ladder_bf16::pingpong_stages_forward});
            kernels.push_back({"9d rung 9c, Q fragments in registers", ladder_bf16::pingpong_qreg_forward});
            kernels.push_back({"10 + persistent, tile list", ladder_bf16::persistent_forward});
            kernels.push_back({"10b rung 10, Q fragments in registers", ladder_bf16::persistent_qreg_forward});
            kernels.push_back({"10c rung 10, three consumer warpgroups at D=64", ladder_bf16::persistent_three_forward});
        }
        kernels.push_back({"reference (flash_attention_forward_bf16)", task4::flash_attention_forward_bf16});
        if (!only.empty())
            kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                         [&](const Kernel& k) {
                                             return only.find("," + k.name.substr(0, k.name.find(' ')) + ",") == std::string::npos;
                                         }),
                          kernels.end());
#else
        kernels.push_back({"flash_attention_forward_bf16", task4::flash_attention_forward_bf16});
#endif
        std::vector<BenchShape> listed = custom;
        if (listed.empty() && grid)
            listed.assign(attn::kAnchorShapes.begin(), attn::kAnchorShapes.end());
        if (!listed.empty()) {
            for (BenchShape s : listed)
                for (bool causal : {false, true}) s.causal = causal, run_shape(ctx.bencher, ctx.ceilings, gemm, s, kernels, quick);
            return;
        }
        for (int D : {128, 64})
            for (int S : {4096, 1024})
                for (bool causal : {false, true})
                    if (one ? (S == 4096 && D == 128 && !causal) : (!quick || S == 1024)) run_shape(ctx.bencher, ctx.ceilings, gemm, {4, 16, S, D, causal}, kernels, quick);
    });
}
