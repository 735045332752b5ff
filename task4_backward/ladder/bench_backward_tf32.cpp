// bench_backward_tf32.cpp — the backward ladder's top rung, 3xTF32 on the tensor cores (flash_backward_tf32.cuh),
// against the FFMA reference (task4_backward/reference/flash_attention_backward.cu) and the rung's first version (S and dP summed
// over all of D inside the tensor core's accumulators), on one GPU in one process:
//   1. ragged shapes (S = 1, 127, 129, 513, 1000, 2048, Sq ≠ Sk both ways, causal with Sq > Sk, B·H = 15, D = 32, 64,
//      96, 128): each backward, called on the float64 oracle's O and lse as the 4c tests do, its dQ, dK and dV against
//      the oracle (common/cuda/backward_oracle.h) with the tests' tolerance, 2e-5 + 1e-4·|want|; unwritten outputs are NaN;
//   2. accuracy against float64, at every shape of 1 and 3: max |diff|, relative L2 (‖got − want‖ / ‖want‖ over dQ, dK
//      and dV together) and the largest share of the tolerance used by any element (as tools/vs_torch/sdpa_backward.py gives
//      torch's);
//   3. timings as make bench-task4-backward takes them (common/cuda/bench.h: events, device synchronised, L2 flushed,
//      warm-up, median; the backward on the reference forward's O and lse) at the ladder's shapes (B=4 H=32 S=128,
//      B=4 H=16 S=1024 and 4096, D=128), at D = 32, 64, 96 (B=4 H=16 S=1024), and at the course's B=64 H=32 S=4096.
//   make ladder-task4-backward-tf32 [ARGS="--quick"]    (course repository, a GPU; --quick: no B=64;
//                                                       --sanitize: the rung alone on small shapes, for compute-sanitizer)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/backward_oracle.h"
#include "task4_backward/ladder/ladder_backward.h"
#include "task4_backward/task4_backward.h"

using namespace attn;

namespace {

constexpr double kAtol = 2e-5, kRtol = 1e-4;  // the 4c tests' tolerance (task4/README.md)

using Backward = void (*)(const float*, const float*, const float*, const float*, const float*, const float*, float*, float*,
                          float*, int, int, int, int, int, bool);
struct Kernel {
    const char* name;
    Backward fn;
};
const Kernel kKernels[] = {{"FFMA reference", task4::flash_attention_backward},
                           {"3xTF32 rung", task4::ladder_backward::tf32_backward},
                           {"3xTF32, S, dP in one acc.", task4::ladder_backward::tf32_backward_s_dp_whole}};

struct Case {
    int B, H, Sq, Sk, D;
    bool causal;
    std::string name() const {
        return Sq == Sk ? fmt::format("B={} H={} S={} D={}{}", B, H, Sq, D, causal ? " causal" : "")
                        : fmt::format("B={} H={} Sq={} Sk={} D={}{}", B, H, Sq, Sk, D, causal ? " causal" : "");
    }
    int BH() const { return B * H; }
};

// Errors of dQ, dK, dV together against the oracle's.
struct Err {
    double max_abs = 0, d2 = 0, w2 = 0, share = 0;
    size_t outside = 0, nonfinite = 0;
    void add(const std::vector<float>& got, const std::vector<float>& want) {
        for (size_t i = 0; i < got.size(); ++i) {
            const double g = got[i], w = want[i];
            if (!std::isfinite(g)) {
                ++nonfinite;
                continue;
            }
            const double d = std::fabs(g - w), bound = kAtol + kRtol * std::fabs(w);
            max_abs = std::max(max_abs, d), share = std::max(share, d / bound);
            d2 += d * d, w2 += w * w;
            if (d > bound) ++outside;
        }
    }
    bool ok() const { return outside == 0 && nonfinite == 0; }
    std::string str() const {
        return fmt::format("max|diff| {:.1e}  rel L2 {:.1e}  {:3.0f}% of tol  {}", max_abs, w2 > 0 ? std::sqrt(d2 / w2) : 0.0,
                           100 * share, ok() ? "ok" : fmt::format("MISMATCH: {} outside, {} NaN/Inf", outside, nonfinite));
    }
};

// Heads `heads` of a [BH, rows, D] device tensor, to the host.
std::vector<float> gather(const DeviceBuffer<float>& x, const std::vector<int>& heads, size_t head) {
    std::vector<float> out(heads.size() * head);
    for (size_t i = 0; i < heads.size(); ++i)
        CUDA_CHECK(cudaMemcpy(out.data() + i * head, x.get() + size_t(heads[i]) * head, head * 4, cudaMemcpyDeviceToHost));
    return out;
}

struct Inputs {
    Case s;
    size_t nq, nk, nl;
    DeviceBuffer<float> q, k, v, g, o, lse, dq, dk, dv;
    explicit Inputs(const Case& sh, uint64_t seed)
        : s(sh), nq(size_t(sh.BH()) * sh.Sq * sh.D), nk(size_t(sh.BH()) * sh.Sk * sh.D), nl(size_t(sh.BH()) * sh.Sq),
          q(nq), k(nk), v(nk), g(nq), o(nq), lse(nl), dq(nq), dk(nk), dv(nk) {
        fill_normal(q.get(), nq, seed), fill_normal(k.get(), nk, seed + 1), fill_normal(v.get(), nk, seed + 2),
            fill_normal(g.get(), nq, seed + 3);
    }
    void call(const Kernel& kn, const float* o_in, const float* lse_in) {
        kn.fn(q.get(), k.get(), v.get(), o_in, g.get(), lse_in, dq.get(), dk.get(), dv.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
    }
};

// The float64 oracle's O, lse, dQ, dK, dV of heads `heads` (device buffers, [heads, …]).
struct Want {
    DeviceBuffer<float> o, lse, dq, dk, dv;
};
Want oracle(const Inputs& in, const std::vector<int>& heads) {
    const Case& s = in.s;
    const size_t hq = size_t(s.Sq) * s.D, hk = size_t(s.Sk) * s.D, n = heads.size();
    DeviceBuffer<float> q(n * hq), k(n * hk), v(n * hk), g(n * hq);
    auto take = [&](const DeviceBuffer<float>& src, DeviceBuffer<float>& dst, size_t head) {
        for (size_t i = 0; i < n; ++i)
            CUDA_CHECK(cudaMemcpy(dst.get() + i * head, src.get() + size_t(heads[i]) * head, head * 4, cudaMemcpyDeviceToDevice));
    };
    take(in.q, q, hq), take(in.k, k, hk), take(in.v, v, hk), take(in.g, g, hq);
    Want w{DeviceBuffer<float>(n * hq), DeviceBuffer<float>(n * s.Sq), DeviceBuffer<float>(n * hq), DeviceBuffer<float>(n * hk),
           DeviceBuffer<float>(n * hk)};
    task4::attention_backward_f64_gpu(q.get(), k.get(), v.get(), g.get(), w.o.get(), w.lse.get(), w.dq.get(), w.dk.get(),
                                      w.dv.get(), int(n), s.Sq, s.Sk, s.D, s.causal);
    return w;
}

Err compare(const Inputs& in, const Want& w, const std::vector<int>& heads) {
    const size_t hq = size_t(in.s.Sq) * in.s.D, hk = size_t(in.s.Sk) * in.s.D;
    Err e;
    e.add(gather(in.dq, heads, hq), w.dq.download());
    e.add(gather(in.dk, heads, hk), w.dk.download());
    e.add(gather(in.dv, heads, hk), w.dv.download());
    return e;
}

std::vector<int> all_heads(int BH) {
    std::vector<int> h(BH);
    for (int i = 0; i < BH; ++i) h[i] = i;
    return h;
}

// 1: ragged shapes, every head, each backward on the oracle's O and lse.
int ragged(const std::vector<Case>& shapes) {
    int bad = 0;
    fmt::print("\n1. Ragged shapes: dQ, dK, dV against the float64 oracle on every head (tolerance {} + {}*|want|); each "
               "backward called on the oracle's O and lse, outputs poisoned (NaN) before the call\n",
               kAtol, kRtol);
    for (const Case& s : shapes) {
        Inputs in(s, 1000 + s.Sq + 7 * s.Sk + s.D);
        const std::vector<int> heads = all_heads(s.BH());
        const Want w = oracle(in, heads);
        for (const Kernel& kn : kKernels) {
            for (auto* t : {&in.dq, &in.dk, &in.dv}) t->poison();
            in.call(kn, w.o.get(), w.lse.get());
            CUDA_CHECK(cudaDeviceSynchronize());
            const Err e = compare(in, w, heads);
            bad += !e.ok();
            fmt::print("  {:<36} {:<26} {}\n", s.name(), kn.name, e.str());
        }
    }
    return bad;
}

// 3 (and 2): timings, each output checked against float64 on every head (S ≤ 128) or on heads 0 and B·H − 1.
int timed(Bencher& b, const Ceilings& c, const Case& s) {
    Inputs in(s, 21);
    const double scores = double(s.Sq) * s.Sk * s.BH();
    const std::vector<int> heads = scores <= 1.1e8 ? all_heads(s.BH()) : std::vector<int>{0, s.BH() - 1};
    const BenchOptions opt = scores > 4e9 ? BenchOptions{1, 3, true} : scores > 1.1e8 ? BenchOptions{2, 10, true} : BenchOptions{3, 20, true};
    const double flops = 2.5 * 4.0 * s.BH() * double(s.Sq) * s.Sk * s.D * (s.causal ? 0.5 : 1.0);
    task4::flash_attention_forward_lse(in.q.get(), in.k.get(), in.v.get(), in.o.get(), in.lse.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
    const Want w = oracle(in, heads);
    fmt::print("\n{}   (checked: {})\n", s.name(), heads.size() == size_t(s.BH()) ? "every head" : "heads 0 and B·H−1");
    int bad = 0;
    constexpr int N = sizeof(kKernels) / sizeof(kKernels[0]);
    double ms[N] = {};
    for (int i = 0; i < N; ++i) {
        const Kernel& kn = kKernels[i];
        for (auto* t : {&in.dq, &in.dk, &in.dv}) t->poison();
        in.call(kn, in.o.get(), in.lse.get());
        CUDA_CHECK(cudaDeviceSynchronize());
        const Err e = compare(in, w, heads);
        bad += !e.ok();
        const Timing t = b.time([&] { in.call(kn, in.o.get(), in.lse.get()); }, opt);
        ms[i] = t.median_ms;
        fmt::print("  {}   {}\n", perf_line(kn.name, t, flops, 0, c), e.str());
    }
    for (int i = 1; i < N; ++i)
        fmt::print("  {} / FFMA reference: {:.2f}x faster{}\n", kKernels[i].name, ms[0] / ms[i],
                   task4::ladder_backward::tf32_backward_runs_here(s.D) ? "" : "  (this GPU runs the FFMA fallback at this D)");
    return bad;
}

// --sanitize: the rung alone on four small ragged shapes, once each, no oracle and no timing (for compute-sanitizer).
int sanitize() {
    for (const Case& s : {Case{1, 1, 130, 70, 128, true}, Case{2, 1, 65, 130, 64, false}, Case{1, 2, 33, 33, 32, true},
                          Case{1, 1, 200, 200, 96, true}}) {
        Inputs in(s, 5);
        task4::flash_attention_forward_lse(in.q.get(), in.k.get(), in.v.get(), in.o.get(), in.lse.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
        in.call(kKernels[1], in.o.get(), in.lse.get());
        CUDA_CHECK(cudaDeviceSynchronize());
        fmt::print("{}: ran\n", s.name());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string arg = argc > 1 ? argv[1] : "";
    if (arg == "--sanitize") {
        try {
            return sanitize();
        } catch (const std::exception& e) {
            fmt::print(stderr, "bench_backward_tf32 --sanitize: {}\n", e.what());
            return 1;
        }
    }
    const bool quick = arg == "--quick";
    return run_benchmark("bench_backward_tf32", stdout, [&](BenchContext& ctx) {
        for (int D : {32, 64, 96, 128})
            fmt::print("head_dim {:>3}: {}\n", D,
                       task4::ladder_backward::tf32_backward_runs_here(D) ? "3xTF32 on the tensor cores"
                                                                          : "the FFMA reference (this GPU cannot run the rung)");
        int bad = ragged({
            {1, 2, 1, 1, 64, true},        {1, 2, 1, 1, 128, false},      {1, 3, 127, 127, 32, true},
            {1, 3, 127, 127, 128, false},  {1, 3, 129, 129, 96, false},   {1, 3, 129, 129, 64, true},
            {1, 5, 513, 513, 96, true},    {2, 2, 1000, 1000, 64, false}, {1, 3, 1000, 1000, 128, true},
            {1, 2, 100, 300, 64, false},   {1, 2, 77, 200, 128, true},    {1, 2, 300, 100, 32, true},
            {1, 2, 300, 100, 128, true},   {2, 1, 65, 130, 96, false},    {1, 1, 33, 33, 32, true},
            {3, 5, 257, 257, 128, true},   {3, 5, 257, 257, 32, false},   {1, 2, 2048, 2048, 128, false},
            {1, 2, 2048, 2048, 64, true},  {1, 3, 2500, 1100, 96, true},  {4, 32, 128, 128, 128, false},
            {4, 32, 128, 128, 128, true},
        });
        fmt::print("\n2-3. Timings (backward FLOPs = 2.5 x 4*B*H*S^2*D, halved when causal; the backward on the reference "
                    "forward's O and lse) and accuracy against float64\n");
        std::vector<Case> shapes;
        for (bool causal : {false, true}) shapes.push_back({4, 32, 128, 128, 128, causal});
        for (int S : {1024, 4096})
            for (bool causal : {false, true}) shapes.push_back({4, 16, S, S, 128, causal});
        for (int D : {32, 64, 96}) shapes.push_back({4, 16, 1024, 1024, D, false});
        if (!quick)
            for (bool causal : {false, true}) shapes.push_back({64, 32, 4096, 4096, 128, causal});
        for (const Case& s : shapes) bad += timed(ctx.bencher, ctx.ceilings, s);
        fmt::print("\n{}\n", bad ? fmt::format("FAILED: {} kernel-shape pairs outside the tolerance", bad)
                                 : "every kernel within the tolerance at every shape");
        if (bad) throw std::runtime_error("mismatches against the float64 oracle");
    });
}
