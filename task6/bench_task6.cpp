// bench_task6.cpp — Task 6's model at the course's size on one GPU, in one process: TTFT, TBT
// (median, p90), tokens/s and the KV cache's size for the student's path; the no-cache baseline
// (every step recomputes the sequence with the Task-4 kernel); where one decode step's time goes
// (GEMMs, attention, the rest, from events between phases) and the host's launch time per step;
// each against its floor: TBT vs streaming the weights once at the measured copy bandwidth, TTFT
// vs the prefill's GEMM FLOPs at the measured cuBLAS SGEMM rate.
//   make bench-task6 IMPL=reference [ARGS="--layers 4 --steps 20"]
// A GPU without room for the 26 GB of weights runs fewer layers and says so.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_compare.h"
#include "common/llm/skinny_gemm.h"
#include "task6/model.h"
#include "task6/timing.h"

using namespace attn;
using namespace task6;

namespace {

struct Args {
    int layers = 0, steps = 100, prompt = 1024, skinny_max_k = -1;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const int v = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--layers")) a.layers = v;
        else if (!std::strcmp(argv[i], "--steps")) a.steps = v;
        else if (!std::strcmp(argv[i], "--prompt")) a.prompt = v;
        else if (!std::strcmp(argv[i], "--skinny-max-k")) a.skinny_max_k = v;
        else throw std::invalid_argument(fmt::format("unknown option {} (--layers N, --steps N, --prompt N, --skinny-max-k K)", argv[i]));
    }
    return a;
}

// FLOPs of a prefill's GEMMs: 2 per weight per token, the LM head for the last position only.
double prefill_gemm_flops(const ModelConfig& c, int S) {
    const double per_token = double(c.layers) * (4.0 * c.hidden * c.hidden + 3.0 * c.ffn * c.hidden);
    return 2.0 * c.batch * (S * per_token + double(c.vocab) * c.hidden);
}

void print_breakdown(const char* what, const std::map<std::string, double>& ms) {
    double total = 0;
    for (const auto& [k, v] : ms) total += v;
    std::string line = fmt::format("  {:<22}", what);
    for (const auto& [k, v] : ms) line += fmt::format("  {} {:.3f} ms ({:.0f}%)", k, v, 100 * v / total);
    fmt::print("{}   (sum {:.3f} ms, events between phases)\n", line, total);
}

// A decode step's projections alone: the skinny kernel against cuBLAS on the same operands, in GB/s
// of weights streamed (each output checked against cuBLAS's).
void bench_projections(BenchContext& ctx, const ModelConfig& c) {
    fmt::print("\ndecode-step projections (T = batch {} rows): skinny kernel vs cuBLAS SGEMM\n", c.batch);
    CublasGemm gemm;
    const struct { const char* name; int N, K; } shapes[] = {{"qkv", 3 * c.hidden, c.hidden}, {"out", c.hidden, c.hidden},
                                                             {"gate+up", 2 * c.ffn, c.hidden}, {"down", c.hidden, c.ffn},
                                                             {"lm head", c.vocab, c.hidden}};
    for (const auto& s : shapes) {
        DeviceBuffer<float> x(size_t(c.batch) * s.K), W(size_t(s.N) * s.K), y(size_t(c.batch) * s.N), want(y.size());
        fill_uniform(x.get(), x.size(), 1, -1.f, 1.f), fill_uniform(W.get(), W.size(), 2, -0.02f, 0.02f);
        gemm.nt(x.get(), W.get(), want.get(), 1, c.batch, s.N, s.K);
        const Timing blas = ctx.bencher.time([&] { gemm.nt(x.get(), W.get(), y.get(), 1, c.batch, s.N, s.K); });
        const double bytes = double(W.bytes());
        fmt::print("  {}\n", perf_line(fmt::format("{} {}×{} cuBLAS", s.name, s.N, s.K), blas, 0, bytes, ctx.ceilings));
        y.poison();
        const Timing mine = ctx.bencher.time([&] { llm::skinny_gemm_nt(x.get(), W.get(), y.get(), c.batch, s.N, s.K, 0.f); });
        const GpuDiff d = gpu_compare(y.get(), want.get(), y.size(), 1e-4, 1e-4);
        fmt::print("  {}   {}\n", perf_line(fmt::format("{} {}×{} skinny", s.name, s.N, s.K), mine, 0, bytes, ctx.ceilings),
                   d.ok() ? "matches cuBLAS" : fmt::format("DIFFERS from cuBLAS (max {:.2e})", d.max_abs));
    }
}

void run(BenchContext& ctx, const Args& a) {
    if (a.skinny_max_k >= 0) {
        llm::set_skinny_max_k(a.skinny_max_k);
        fmt::print("decode projections: the skinny kernel up to K = {}, cuBLAS beyond\n", a.skinny_max_k);
    }
    ModelConfig full = ModelConfig::course();
    full.max_seq = a.prompt + a.steps + 16;  // room for the profiled steps after the timed ones
    if (a.layers > 0) full.layers = a.layers;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    std::string cut;
    const ModelConfig cfg = fit_layers(full, full.run_bytes(Attention::kv_cache) + full.run_bytes(Attention::recompute), free_b, cut);
    fmt::print("model: {}{}\n", cfg.describe(), cut.empty() ? "" : "\n  " + cut);
    fmt::print("run: batch {}, prompt {}, {} new tokens; weights {:.2f} GB, KV cache {:.2f} GB\n", cfg.batch, a.prompt, a.steps,
               cfg.weight_bytes() / 1e9, cfg.kv_cache_bytes() / 1e9);
    auto w = std::make_shared<Weights>(cfg);
    std::vector<int> prompt(size_t(cfg.batch) * a.prompt);
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int((i * 2654435761u) % uint64_t(cfg.vocab));

    DecoderModel mine(w, Attention::kv_cache);
    time_generation(mine, prompt, a.prompt, 3);  // warm-up: cuBLAS picks its kernels
    std::vector<double> ttfts;
    GenerationTiming t;
    for (int rep = 0; rep < 3; ++rep) {
        t = time_generation(mine, prompt, a.prompt, rep == 2 ? a.steps : 0);
        ttfts.push_back(t.ttft_ms);
    }
    const double ttft = percentile(ttfts, 0.5), tbt = t.tbt_median();
    const double weights_floor = cfg.weight_bytes() / (ctx.ceilings.copy_gbps * 1e6);
    const double ttft_floor = prefill_gemm_flops(cfg, a.prompt) / (ctx.ceilings.sgemm_tflops * 1e9);
    fmt::print("\nKV cache (attention_forward):\n");
    fmt::print("  TTFT                 {:9.1f} ms (median of 3)   floor {:.1f} ms (prefill GEMMs at SGEMM rate): {:.2f}× it"
               "  [goal ≤ 1.5×]\n", ttft, ttft_floor, ttft / ttft_floor);
    fmt::print("  TBT                  {:9.3f} ms median, p90 {:.3f}, min {:.3f} over {} steps   floor {:.3f} ms (weights once at copy"
               " bandwidth): {:.2f}× it  [goal ≤ 1.5×]\n", tbt, t.tbt_p90(), percentile(t.tbt_ms, 0), a.steps, weights_floor,
               tbt / weights_floor);
    fmt::print("  decode               {:9.1f} tokens/s (batch {}); whole run {:.1f} tokens/s including the prefill\n",
               cfg.batch * 1000.0 / tbt, cfg.batch, cfg.batch * a.steps * 1000.0 / (ttft + t.tbt_total()));

    // Where a decode step's time goes, and what the host spends launching it.
    llm::PhaseTimer timer;
    mine.set_phase_timer(&timer);
    mine.decode();
    print_breakdown("decode step:", timer.collect());
    mine.set_phase_timer(nullptr);
    std::vector<double> host_ms;
    for (int i = 0; i < 10; ++i) {
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto t0 = std::chrono::steady_clock::now();
        mine.decode();
        host_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    fmt::print("  host launch time of a decode step: {:.3f} ms median (the GPU's {:.3f} ms hide it{})\n",
               percentile(host_ms, 0.5), tbt, percentile(host_ms, 0.5) < 0.5 * tbt ? "" : " only partly: a CUDA graph would help");
    timer.collect();
    mine.set_phase_timer(&timer);
    mine.prefill(prompt, a.prompt);
    print_breakdown("prefill:", timer.collect());
    mine.set_phase_timer(nullptr);

    bench_projections(ctx, cfg);

    // The no-cache baseline, stepping from the end of the prompt.
    DecoderModel baseline(w, Attention::recompute);
    baseline.prefill(prompt, a.prompt);
    const double no_cache = median_step_ms(baseline, 3);
    fmt::print("\nno cache (whole sequence each step, Task-4 kernel):\n");
    fmt::print("  TTFT                 {:9.1f} ms (the same prefill)\n", ttft);
    fmt::print("  step                 {:9.1f} ms (median of 3, at {} tokens)   KV cache: {:.1f}× faster per token\n",
               no_cache, a.prompt + 2, no_cache / tbt);
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    try {
        a = parse(argc, argv);
    } catch (const std::exception& e) {
        fmt::print(stderr, "bench_task6: {}\n", e.what());
        return 2;
    }
    return run_benchmark("bench_task6", stdout, [&](BenchContext& ctx) { run(ctx, a); });
}
