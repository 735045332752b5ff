// timed.cpp — see timed.h.
#include "grader/timed.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include <unistd.h>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/digest.h"
#include "common/cuda/memory_watch.h"
#include "common/remote/runner.h"
#include "common/seed.h"

namespace grader {
namespace {

using namespace attn;
using json = nlohmann::json;

struct Shape {
    std::string name;
    json args;  // the runner's "timed" arguments (without seed/warmup/reps)
    double flops, bytes;
    int warmup, reps;
    size_t out_n;
    // The oracle's output for the inputs of call i (made from the same nonce) → its digest.
    std::function<Digest(uint64_t seed)> oracle;
    // The course's speedups: a baseline timed here (trusted code, the same GPU, the same run).
    std::string baseline_name;
    // Its median; with `memory` (Task 4's memory side by side), also the device bytes its first call takes.
    std::function<double(Bencher&, json* memory)> baseline_ms;
    bool memory_side_by_side = false;  // Task 4: the pipeline's and the submission's device memory per call
};

// Heads whose S×S scores fit in 1 GB (at least one): the unfused pipeline's slice.
int heads_per_slice(int S) { return std::max(1, int((size_t(1) << 30) / (sizeof(float) * size_t(S) * S))); }

// Attention over the heads of q, k, v (each BH·S·D) by the harness's oracle — cuBLAS GEMMs, TF32
// off, and a softmax, materialising the scores — in slices of at most 1 GB of scores.
void sliced_oracle(CublasGemm& gemm, const float* q, const float* k, const float* v, float* o, int BH, int S, int D,
                   bool causal, DeviceBuffer<float>& scores) {
    const int chunk = heads_per_slice(S);
    if (scores.size() < size_t(std::min(chunk, BH)) * S * S) scores = DeviceBuffer<float>(size_t(std::min(chunk, BH)) * S * S);
    const size_t head = size_t(S) * D;
    for (int bh = 0; bh < BH; bh += chunk)
        attention_oracle(gemm, q + bh * head, k + bh * head, v + bh * head, o + bh * head, std::min(chunk, BH - bh), S, S, D,
                         causal, scores.get());
}

// Times attention over B·H heads of S positions by the oracle (fresh inputs, L2 flushed, events). With
// `memory`: its first call is watched from this process (the GPU's used memory) for the bytes the pipeline
// takes — the scores, in slices of at most 1 GB as timed, and whatever cuBLAS allocates.
double time_unfused_attention(Bencher& bench, CublasGemm& gemm, int BH, int S, int D, bool causal, json* memory = nullptr) {
    const size_t n = size_t(BH) * S * D;
    DeviceBuffer<float> q(n), k(n), v(n), o(n), scores(1);
    fill_normal(q.get(), n, 91), fill_normal(k.get(), n, 92), fill_normal(v.get(), n, 93);
    auto call = [&] { sliced_oracle(gemm, q.get(), k.get(), v.get(), o.get(), BH, S, D, causal, scores); };
    if (memory) {
        CUDA_CHECK(cudaDeviceSynchronize());
        wait_for_device_memory_to_settle();
        const double peak = device_memory_peak_during([&] {
            call();
            CUDA_CHECK(cudaDeviceSynchronize());
            std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the watcher samples every ~100 µs
        });
        *memory = {{"pipeline_peak_bytes", peak}, {"scores_bytes", 4.0 * BH * double(S) * S},
                   {"scores_slice_bytes", 4.0 * double(S) * S * std::min(BH, heads_per_slice(S))}};
    }
    const bool large = double(BH) * S * S > 1e9;
    return bench.time(call, BenchOptions{1, large ? 2 : 5, true}).median_ms;
}

// The runner's "timed" request: warmup + reps calls at `args`, inputs made from `seed`.
remote::Message timed_request(json args, uint64_t seed, int warmup, int reps) {
    args["seed"] = seed, args["warmup"] = warmup, args["reps"] = reps;
    remote::Message req;
    req.head = {{"op", "timed"}, {"args", args}};
    return req;
}

// The device memory one timed call of the submission takes, watched from this process (the whole
// GPU's used bytes) around a fresh runner's request: its q, k, v, o, the timing's L2-flush buffer and
// whatever the kernel allocates. A first call at a tiny shape loads the kernels before the window
// opens. Allocations the runner keeps between calls are not seen: Task 4's fused case (graded)
// watches a first call at S = 32768.
double runner_memory(const Shape& s, uint64_t seed) {
    remote::stop_runner();
    wait_for_device_memory_to_settle();
    remote::request(timed_request({{"B", 1}, {"H", 1}, {"S", 128}, {"D", s.args.at("D")}, {"causal", false}}, seed, 0, 1));
    wait_for_device_memory_to_settle();
    const remote::Message req = timed_request(s.args, seed, 0, 3);  // a window of ≥ 3 calls
    const double peak = device_memory_peak_during([&] { remote::request(req); });
    remote::stop_runner();
    return peak;
}

struct Timed {
    std::vector<double> ms;
    std::vector<Digest> digests;
    double bracket_ms = 0, median = 0;
    double overhead_ms() const {  // per call, outside the reported kernel times (the warm-ups counted at the median)
        double reported = 0;
        for (double m : ms) reported += m;
        const int calls = int(ms.size()) + warmup;
        return (bracket_ms - reported - median * warmup) / calls;
    }
    int warmup = 0;
};

Timed timed(const Shape& s, uint64_t seed) {
    const remote::Message req = timed_request(s.args, seed, s.warmup, s.reps);
    // One untimed call first, so the runner's start, its CUDA context and first allocations stay
    // outside the clock (they would count as "time outside the reported calls").
    remote::request(timed_request(s.args, seed ^ 0x5eedull, 0, 1));
    Timed t;
    t.warmup = s.warmup;
    const auto t0 = std::chrono::steady_clock::now();
    const remote::Message reply = remote::request(req, {});
    t.bracket_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const json& timing = reply.head.at("timing");
    t.ms = timing.at("ms").get<std::vector<double>>();
    for (const auto& d : timing.at("digests")) t.digests.push_back({d.at(0).get<double>(), d.at(1).get<double>(), d.at(2).get<double>()});
    if (int(t.ms.size()) != s.reps || int(t.digests.size()) != s.reps) throw remote::RunnerFailure("the runner returned the wrong number of timed calls");
    std::vector<double> sorted = t.ms;
    std::sort(sorted.begin(), sorted.end());
    t.median = sorted[sorted.size() / 2];
    return t;
}

Shape flash_shape(CublasGemm& gemm, int B, int H, int S, int D, bool causal) {
    Shape s;
    s.name = fmt::format("B={} H={} S={} D={}{}", B, H, S, D, causal ? " causal" : "");
    s.args = {{"B", B}, {"H", H}, {"S", S}, {"D", D}, {"causal", causal}};
    s.flops = 4.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0);
    s.bytes = 4.0 * B * H * double(S) * D * 4;
    const bool large = S > 1024;
    s.warmup = large ? 1 : 3, s.reps = large ? 5 : 20;
    s.out_n = size_t(B) * H * S * D;
    s.oracle = [&gemm, B, H, S, D, causal, n = s.out_n](uint64_t seed) {
        DeviceBuffer<float> q(n), k(n), v(n), o(n), scores(1);
        fill_normal(q.get(), n, seed), fill_normal(k.get(), n, seed + 1), fill_normal(v.get(), n, seed + 2);
        sliced_oracle(gemm, q.get(), k.get(), v.get(), o.get(), B * H, S, D, causal, scores);
        return digest(o.get(), n);
    };
    s.baseline_name = "cuBLAS + softmax";
    s.baseline_ms = [&gemm, B, H, S, D, causal](Bencher& bench, json* memory) {
        return time_unfused_attention(bench, gemm, B * H, S, D, causal, memory);
    };
    s.memory_side_by_side = true;
    return s;
}

Shape decode_shape(CublasGemm& gemm, int B, int H, int L, int D) {
    Shape s;
    s.name = fmt::format("decode B={} H={} L={} D={}", B, H, L, D);
    s.args = {{"B", B}, {"H", H}, {"L", L}, {"D", D}};
    s.flops = 4.0 * B * H * double(L) * D;
    s.bytes = 2.0 * B * H * double(L) * D * 4;
    s.warmup = 3, s.reps = 20;
    s.out_n = size_t(B) * H * D;
    s.oracle = [B, H, L, D, n = s.out_n](uint64_t seed) {
        const size_t nc = size_t(B) * H * L * D;
        DeviceBuffer<float> kc(nc), vc(nc), q(n), o(n);
        DeviceBuffer<double> scores(size_t(B) * H * L);
        fill_normal(q.get(), n, seed), fill_normal(kc.get(), nc, seed + 1), fill_normal(vc.get(), nc, seed + 2);
        decode_oracle(q.get(), kc.get(), vc.get(), o.get(), B * H, L, L, D, scores.get());
        return digest(o.get(), n);
    };
    // The course's KV-cache speedup: without a cache, each new token recomputes causal attention
    // over every position (here its attention alone, by cuBLAS + softmax).
    s.baseline_name = "no cache: causal attention over all L (cuBLAS + softmax)";
    s.baseline_ms = [&gemm, B, H, L, D](Bencher& bench, json*) { return time_unfused_attention(bench, gemm, B * H, L, D, true); };
    return s;
}

// Task 2's softmax: 5 FLOPs an element (max, subtract, exp, sum, scale), the input read and the output
// written once. Shown, not credited (grader/rubric.json): it puts Task 2 on the roofline.
Shape softmax_shape(int rows, int cols) {
    Shape s;
    s.name = fmt::format("softmax rows={} cols={}", rows, cols);
    s.args = {{"kind", "softmax"}, {"rows", rows}, {"cols", cols}};
    s.out_n = size_t(rows) * cols;
    s.flops = 5.0 * double(s.out_n), s.bytes = 2.0 * double(s.out_n) * 4;
    s.warmup = 3, s.reps = 20;
    s.oracle = [rows, cols, n = s.out_n](uint64_t seed) {
        DeviceBuffer<float> x(n);
        fill_normal(x.get(), n, seed);
        softmax_oracle(x.get(), rows, cols);
        return digest(x.get(), n);
    };
    return s;
}

// Task 2's GEMMs (C = A·B or A·Bᵀ, fp32), against cuBLAS SGEMM (TF32 off) on the same inputs.
Shape gemm_shape(CublasGemm& gemm, bool nt, int M, int N, int K) {
    Shape s;
    s.name = fmt::format("{} M={} N={} K={}", nt ? "gemm_nt" : "gemm_nn", M, N, K);
    s.args = {{"kind", nt ? "gemm_nt" : "gemm_nn"}, {"M", M}, {"N", N}, {"K", K}};
    s.out_n = size_t(M) * N;
    s.flops = 2.0 * M * double(N) * K, s.bytes = 4.0 * (double(M) * K + double(K) * N + double(M) * N);
    s.warmup = 3, s.reps = 20;
    auto run = [&gemm, nt, M, N, K](const float* a, const float* b, float* c) {
        if (nt) gemm.nt(a, b, c, 1, M, N, K);
        else gemm.nn(a, b, c, 1, M, N, K);
    };
    s.oracle = [run, M, N, K, n = s.out_n](uint64_t seed) {
        DeviceBuffer<float> a(size_t(M) * K), b(size_t(K) * N), c(n);
        fill_normal(a.get(), a.size(), seed), fill_normal(b.get(), b.size(), seed + 1);
        run(a.get(), b.get(), c.get());
        return digest(c.get(), n);
    };
    s.baseline_name = "cuBLAS SGEMM";
    s.baseline_ms = [run, M, N, K](Bencher& bench, json*) {
        DeviceBuffer<float> a(size_t(M) * K), b(size_t(K) * N), c(size_t(M) * N);
        fill_normal(a.get(), a.size(), 91), fill_normal(b.get(), b.size(), 92);
        return bench.time([&] { run(a.get(), b.get(), c.get()); }).median_ms;
    };
    return s;
}

std::vector<Shape> shapes_of(int task, CublasGemm& gemm) {
    if (task == 2)
        return {gemm_shape(gemm, false, 4096, 4096, 4096), gemm_shape(gemm, true, 4096, 4096, 4096),
                gemm_shape(gemm, false, 4095, 4097, 4093), softmax_shape(16384, 4096), softmax_shape(4000, 1000)};
    if (task == 4)
        return {flash_shape(gemm, 4, 32, 128, 128, false), flash_shape(gemm, 4, 32, 128, 128, true),
                flash_shape(gemm, 64, 32, 4096, 128, false), flash_shape(gemm, 64, 32, 4096, 128, true)};
    if (task == 5)
        return {decode_shape(gemm, 1, 32, 1024, 128), decode_shape(gemm, 1, 32, 8192, 128), decode_shape(gemm, 1, 32, 32768, 128),
                decode_shape(gemm, 8, 32, 8192, 128), decode_shape(gemm, 32, 32, 4096, 128)};
    throw std::invalid_argument(fmt::format("task {} has no timed shapes", task));
}

// Checks a submission's timing of one shape; returns the measurement row. An empty ref_bin_dir:
// the submission alone (the student kit has no reference; its grader estimates from stored times).
json measure_shape(const Shape& s, const std::string& bin_dir, const std::string& ref_bin_dir, std::mt19937_64& g,
                   Bencher& bench) {
    json row = {{"name", s.name}, {"flops", s.flops}, {"bytes", s.bytes}};
    const uint64_t seed = g() >> 20, ref_seed = g() >> 20;
    remote::use_runner_dir(bin_dir);
    Timed mine;
    try {
        mine = timed(s, seed);
    } catch (const std::exception& e) {
        row["failed_calls"] = 1, row["checked_calls"] = 0, row["reason"] = e.what(), row["ms"] = 0;
        return row;
    }
    Timed ref;
    if (!ref_bin_dir.empty()) {
        remote::use_runner_dir(ref_bin_dir);
        ref = timed(s, ref_seed);
        row["ref_ms"] = ref.median, row["ref_bracket_ms"] = ref.bracket_ms;
    }
    row["ms"] = mine.median, row["reps"] = s.reps, row["bracket_ms"] = mine.bracket_ms;
    // Two timed calls, picked now, must carry the fingerprint of the oracle's output for their inputs.
    int checked = 0, failed = 0;
    std::string reason;
    for (int pick = 0; pick < 2; ++pick) {
        const int j = uniform_int(g, 0, s.reps - 1);
        const Digest want = s.oracle(seed + 4 * uint64_t(s.warmup + j));
        ++checked;
        if (!digests_agree(mine.digests[size_t(j)], want, s.out_n) && failed++ == 0)
            reason = fmt::format("timed call {}: its output's fingerprint (sum {:.6g}, sum of squares {:.6g}, {} non-finite) "
                                 "is not the oracle's (sum {:.6g}, sum of squares {:.6g})",
                                 j + 1, mine.digests[size_t(j)].sum, mine.digests[size_t(j)].sumsq,
                                 mine.digests[size_t(j)].nonfinite, want.sum, want.sumsq);
    }
    row["checked_calls"] = checked, row["failed_calls"] = failed, row["reason"] = reason;
    json mem;
    if (s.baseline_ms) row["baselines"] = {{s.baseline_name, s.baseline_ms(bench, s.memory_side_by_side ? &mem : nullptr)}};
    if (s.memory_side_by_side) {
        mem["io_bytes"] = s.bytes, mem["flush_bytes"] = 2.0 * double(device_info().l2_bytes);
        remote::use_runner_dir(bin_dir);
        try {
            mem["submission_peak_bytes"] = runner_memory(s, seed ^ 0x3e3u);
        } catch (const std::exception& e) {
            mem["submission_error"] = e.what();
        }
        row["memory"] = mem;
    }
    double total = 0;
    for (double ms : mine.ms) total += ms;
    if (total > mine.bracket_ms * 1.02 + 0.5)
        row["timing_flag"] = fmt::format("the runner reported {:.3f} ms of calls inside {:.3f} ms of the grader's clock", total,
                                         mine.bracket_ms);
    // Allowed for: the host's jitter between two runners' requests (0.5 ms a call: an honest kernel at
    // 0.06 ms a call was seen 0.46 ms above the reference on an H100) and a warm-up call's own spread
    // (1 % of the median, which matters for calls of a second).
    else if (!ref_bin_dir.empty() && mine.overhead_ms() > 1.5 * std::max(ref.overhead_ms(), 0.0) + 0.5 + 0.01 * mine.median)
        row["timing_flag"] = fmt::format("the grader's clock saw {:.3f} ms per call outside the reported times, the reference "
                                         "{:.3f} ms: the reported times leave out work",
                                         mine.overhead_ms(), ref.overhead_ms());
    return row;
}

}  // namespace

int measure_performance(int task, const std::string& bin_dir, const std::string& ref_bin_dir_in) {
    // without the reference's runner for this task (the student kit), the submission is timed alone
    const std::string ref_bin_dir =
        access(fmt::format("{}/runner_task{}", ref_bin_dir_in, task).c_str(), X_OK) == 0 ? ref_bin_dir_in : "";
    return run_benchmark("grader --measure-perf", stderr, [&](BenchContext& ctx) {
        remote::use_task(task);
        CublasGemm gemm;
        auto g = rng_for(fmt::format("perf.task{}", task));
        json rows = json::array();
        for (const Shape& s : shapes_of(task, gemm)) {
            rows.push_back(measure_shape(s, bin_dir, ref_bin_dir, g, ctx.bencher));
            fmt::print(stderr, "{}\n", rows.back().dump());
        }
        fmt::print("{}\n", json{{"gpu", ctx.device.name}, {"copy_gbps", ctx.ceilings.copy_gbps},
                                {"sgemm_tflops", ctx.ceilings.sgemm_tflops}, {"reference_timed", !ref_bin_dir.empty()},
                                {"measurements", rows}}
                               .dump());
    });
}

}  // namespace grader
