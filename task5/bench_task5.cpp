// bench_task5.cpp — Task 5 benchmarks on one GPU, in one process:
//   * decode attention against the cache, in GB/s of cache read (bytes = 2·B·H·L·D·4), at the
//     lengths of shared/bench/anchors_torch.py's decode rows; with the reference build, the plain
//     kernel (one block per head) beside split-KV;
//   * the course's run (B=16, prefill 1024, 32 heads of 128, 100 new tokens): the prefill's
//     attention (store the cache + the Task-4 kernel, causal), the time between tokens (append +
//     decode), and the no-cache baseline that recomputes causal attention over all tokens each step.
//   make bench-task5 IMPL=reference
// (A student's table: it links their kernels. Graded timing is the grader's own, grader/timed.h.)
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "common/seed.h"
#include "task4/task4.h"
#include "task5/task5.h"
#include "task5/variants.h"

using namespace attn;

namespace {

FILE* out = stdout;

struct DecodeShape {
    int B, H, L, D;
    std::string name() const { return fmt::format("decode B={} H={} L={} D={}", B, H, L, D); }
    double bytes() const { return 2.0 * B * H * double(L) * D * 4; }
};

// Two caches filled from the seed; timed calls alternate between them and each output is checked.
void bench_decode(Bencher& b, const Ceilings& c, const DecodeShape& s) {
    const int BH = s.B * s.H;
    const size_t cache = size_t(BH) * s.L * s.D;
    DeviceBuffer<float> kc[2] = {DeviceBuffer<float>(cache), DeviceBuffer<float>(cache)};
    DeviceBuffer<float> vc[2] = {DeviceBuffer<float>(cache), DeviceBuffer<float>(cache)};
    DeviceBuffer<float> q[2] = {DeviceBuffer<float>(size_t(BH) * s.D), DeviceBuffer<float>(size_t(BH) * s.D)};
    DeviceBuffer<float> want[2] = {DeviceBuffer<float>(size_t(BH) * s.D), DeviceBuffer<float>(size_t(BH) * s.D)};
    DeviceBuffer<float> o(size_t(BH) * s.D);
    DeviceBuffer<double> scores(size_t(BH) * s.L);
    const uint64_t seed = grader_seed() * 16 + 7;
    for (int i = 0; i < 2; ++i) {
        fill_normal(kc[i].get(), cache, seed + 3 * i), fill_normal(vc[i].get(), cache, seed + 3 * i + 1);
        fill_normal(q[i].get(), q[i].size(), seed + 3 * i + 2);
        decode_oracle(q[i].get(), kc[i].get(), vc[i].get(), want[i].get(), BH, s.L, s.L, s.D, scores.get());
    }
    int call = 0, failed = 0;
    double max_err = 0;
    const Timing t = b.time([&] { task5::decode_attention(q[call % 2].get(), kc[call % 2].get(), vc[call % 2].get(), o.get(), s.B, s.H, s.L, s.L, s.D); },
                            {3, 20, true}, [&] { o.poison(); },
                            [&] {
                                const GpuDiff d = gpu_compare(o.get(), want[call % 2].get(), o.size(), 2e-5, 1e-4);
                                max_err = std::max(max_err, d.max_abs);
                                failed += !d.ok();
                                ++call;
                            });
    fmt::print(out, "{}   ({} calls checked, {} wrong, max err {:.1e})\n", perf_line(s.name() + " (decode_attention)", t, 0, s.bytes(), c),
               call, failed, max_err);
    if (task5::decode_attention_with_splits != nullptr) {  // weak: the reference build only
        for (int splits : {1, task5::choose_splits(BH, s.L)}) {
            const Timing v = b.time([&] {
                task5::decode_attention_with_splits(q[0].get(), kc[0].get(), vc[0].get(), o.get(), s.B, s.H, s.L, s.L, s.D, splits);
            });
            fmt::print(out, "{}\n", perf_line(fmt::format("  reference, {}", splits == 1 ? "plain (1 block per head)"
                                                                                         : fmt::format("split-KV, {} splits", splits)),
                                              v, 0, s.bytes(), c));
        }
    }
}

// The course's run: prefill attention, time between tokens, and the no-cache baseline.
void bench_course(Bencher& b, const Ceilings& c) {
    const int B = 16, H = 32, D = 128, S = 1024, steps = 100, max_seq = 2048, BH = B * H;
    DeviceBuffer<float> kc(size_t(BH) * max_seq * D), vc(kc.size()), q(size_t(BH) * S * D), k(q.size()), v(q.size()), o(q.size());
    DeviceBuffer<float> qn(size_t(BH) * D), kn(qn.size()), vn(qn.size()), on(qn.size());
    fill_normal(q.get(), q.size(), 1), fill_normal(k.get(), k.size(), 2), fill_normal(v.get(), v.size(), 3);
    const Timing prefill = b.time([&] {
        task5::store_prefill(kc.get(), vc.get(), k.get(), v.get(), B, H, max_seq, S, D);
        task4::flash_attention_forward(q.get(), k.get(), v.get(), o.get(), B, H, S, S, D, true);
    }, {2, 10, true});
    // time between tokens: each step timed on its own (events, device synchronised), median over the steps
    std::vector<double> tbt;
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int step = 0; step < steps; ++step) {
        fill_normal(qn.get(), qn.size(), 100 + step), fill_normal(kn.get(), kn.size(), 200 + step);
        fill_normal(vn.get(), vn.size(), 300 + step);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(e0));
        task5::update_cache(kc.get(), vc.get(), kn.get(), vn.get(), B, H, max_seq, D, S + step);
        task5::decode_attention(qn.get(), kc.get(), vc.get(), on.get(), B, H, max_seq, S + step + 1, D);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        tbt.push_back(ms);
    }
    std::sort(tbt.begin(), tbt.end());
    // appending one token alone (B·H rows of K and of V)
    const Timing append = b.time([&] { task5::update_cache(kc.get(), vc.get(), kn.get(), vn.get(), B, H, max_seq, D, S + steps - 1); },
                                 {3, 50, true});
    // no cache: every step recomputes causal attention over all tokens so far (the middle step's length)
    const int L = S + steps / 2;
    DeviceBuffer<float> qa(size_t(BH) * L * D), ka(qa.size()), va(qa.size()), oa(qa.size());
    fill_normal(qa.get(), qa.size(), 4), fill_normal(ka.get(), ka.size(), 5), fill_normal(va.get(), va.size(), 6);
    const Timing nocache = b.time([&] { task4::flash_attention_forward(qa.get(), ka.get(), va.get(), oa.get(), B, H, L, L, D, true); },
                                  {2, 10, true});
    const double tbt_med = tbt[tbt.size() / 2], tbt_p90 = tbt[tbt.size() * 9 / 10];
    const double cache_bytes = 2.0 * BH * (S + steps / 2) * D * 4;
    fmt::print(out, "\n[course] B={} H={} D={} prefill {} then {} tokens\n", B, H, D, S, steps);
    fmt::print(out, "  {}\n", perf_line("prefill attention (cache + task-4 causal)", prefill, 4.0 * BH * S * S * D * 0.5, 0, c));
    fmt::print(out, "  {}\n", perf_line("update_cache, one token", append, 0, 4.0 * BH * D * 4, c));
    fmt::print(out, "  time between tokens (append + decode): median {:.3f} ms, p90 {:.3f} ms, {:.0f} GB/s of cache read\n",
               tbt_med, tbt_p90, cache_bytes / (tbt_med * 1e6));
    fmt::print(out, "  {}\n", perf_line(fmt::format("no-cache step (causal attention over {} tokens)", L), nocache, 0, 0, c));
    fmt::print(out, "  decode speedup of the cache: {:.1f}x per token\n", nocache.median_ms / tbt_med);
}

}  // namespace

int main() {
    return run_benchmark("bench_task5", out, [&](BenchContext& ctx) {
        fmt::print(out, "timing: events, device synchronised, L2 flushed, median of 20; bytes = K and V of the cache read once\n");
        const std::vector<DecodeShape> shapes = {{1, 32, 1024, 128}, {1, 32, 8192, 128}, {1, 32, 32768, 128},
                                                 {8, 32, 8192, 128}, {32, 32, 4096, 128}};
        for (const auto& s : shapes) bench_decode(ctx.bencher, ctx.ceilings, s);
        bench_course(ctx.bencher, ctx.ceilings);
    });
}
