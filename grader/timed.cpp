// timed.cpp — see timed.h.
#include "grader/timed.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include <unistd.h>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bf16_backward_oracle.h"
#include "common/cuda/bench.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/digest.h"
#include "common/cuda/memory_watch.h"
#include "common/cuda/paged_oracle.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/runner.h"
#include "common/seed.h"

namespace grader {
namespace {

using namespace attn;
using json = nlohmann::json;

struct Shape {
    std::string name;
    std::string op = "timed";  // the runner's operation that times it ("timed_paged": part 5b's decode)
    json args;  // its arguments (without seed and calls)
    double flops, bytes;
    // Each timed request makes `calls` calls back to back (enough that the host's jitter is a small
    // part of it), one request per runner in each of `batches` rounds; every one of them is compared with the oracle
    // afterwards (each costs an oracle run here, a few seconds a shape at most).
    int calls, batches;
    // The outputs a call is judged by (one, unnamed, but for 4d's dQ, dK and dV and 6b's two o), out_n elements each
    // unless out_sizes says otherwise (6b's).
    std::vector<std::string> outputs = {""};
    size_t out_n;
    std::vector<size_t> out_sizes;
    size_t size_of(size_t j) const { return j < out_sizes.size() ? out_sizes[j] : out_n; }
    // The oracle's outputs for the inputs of call i (made from the same nonce) → their digests, output j's with the
    // signs the runner fingerprinted it with (sign_seed(j): timed_sign_seed of call i and output j).
    std::function<std::vector<Digest>(uint64_t seed, const std::function<uint64_t(int)>& sign_seed)> oracle;
    // A checked call's tolerance at this task (its cases'): a timed call's output is held to the same, its RMS error
    // within `allowance` of it (digest.h).
    Tolerance tol;
    double allowance = kTimedErrorAllowance;
    // Where the task's cases also bound each output's relative L2 error ‖got − want‖ / ‖want‖ (4d's gradients): that
    // bound (0: none). A timed call's output, its error estimated from a fingerprint, is held to kEstimateRoom× it.
    double rel_l2 = 0;
    // The course's speedups: a baseline timed here (trusted code, the same GPU, the same run).
    std::string baseline_name;
    // Its median; with `memory` (Task 4's memory side by side), also the device bytes its first call takes.
    std::function<double(Bencher&, json* memory)> baseline_ms;
    bool memory_side_by_side = false;  // Task 4: the pipeline's and the submission's device memory per call
};

// A relative L2 error estimated from kProjections projections (digest.h) of an output whose error is exactly at its bound
// exceeds 1.5× the bound in fewer than 1 call in 10,000 (χ² with 32 degrees of freedom above 72): a kernel that passes
// its cases keeps its speed credit.
constexpr double kEstimateRoom = 1.5;

// Times attention over B·H heads of S positions by the oracle (fresh inputs, L2 flushed, events). With
// `memory`: its first call is watched from this process (the GPU's used memory) for the bytes the pipeline
// takes — the scores, in slices of at most 1 GB as timed, and whatever cuBLAS allocates.
double time_unfused_attention(Bencher& bench, CublasGemm& gemm, int BH, int S, int D, bool causal, json* memory = nullptr) {
    const size_t n = size_t(BH) * S * D;
    DeviceBuffer<float> q(n), k(n), v(n), o(n), scores(1);
    fill_normal(q.get(), n, 91), fill_normal(k.get(), n, 92), fill_normal(v.get(), n, 93);
    auto call = [&] { sliced_attention_oracle(gemm, q.get(), k.get(), v.get(), o.get(), BH, S, D, causal, scores); };
    if (memory) {
        CUDA_CHECK(cudaDeviceSynchronize());
        wait_for_device_memory_to_settle();
        const double peak = device_memory_peak_during([&] {
            call();
            CUDA_CHECK(cudaDeviceSynchronize());
            std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the watcher samples every ~100 µs
        });
        *memory = {{"pipeline_peak_bytes", peak}, {"scores_bytes", 4.0 * BH * double(S) * S},
                   {"scores_slice_bytes", 4.0 * double(S) * S * heads_per_gb_of_scores(BH, S, S)}};
    }
    const bool large = double(BH) * S * S > 1e9;
    return bench.time(call, BenchOptions{1, large ? 2 : 5, true}).median_ms;
}

// The runner's timed request: `calls` calls at the shape, inputs made from `seed` (call i: seed + 4i).
remote::Message timed_request(const Shape& s, uint64_t seed, int calls) {
    json args = s.args;
    args["seed"] = seed, args["calls"] = calls;
    remote::Message req;
    req.head = {{"op", s.op}, {"args", args}};
    return req;
}

// The device memory a fresh runner takes for one timed request at the shape, watched from this
// process (the whole GPU's used bytes) from before the runner starts: its CUDA context, whatever its
// constructors take, its q, k, v, o and the timing's L2-flush buffer, and whatever the kernel
// allocates. The same measurement of the null runner says what the harness alone takes.
double runner_memory(const Shape& s, uint64_t seed) {
    remote::stop_runner();
    wait_for_device_memory_to_settle();
    const remote::Message req = timed_request(s, seed, 3);  // a window of ≥ 3 calls
    const double peak = device_memory_peak_during([&] { remote::request(req); });
    remote::stop_runner();
    return peak;
}

// One runner's timed requests at a shape, one per round, each bracketed by this process's clock.
struct Batches {
    std::vector<double> bracket_ms;             // per request (round)
    std::vector<uint64_t> seeds;                // per request: call i's inputs come from seed + 4i
    std::vector<std::vector<std::vector<Digest>>> digests;   // per request, per call, per output
    remote::ProcessReport after_warmup, after;  // threads and signal handlers, from /proc: the most any round had
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

remote::ProcessReport most_of(const remote::ProcessReport& a, const remote::ProcessReport& b) {
    remote::ProcessReport m = a;
    m.threads = std::max(a.threads, b.threads), m.caught_signals = a.caught_signals | b.caught_signals;
    return m;
}

// Nothing inside the clock is the runner's to report: the request goes out, the calls run back to back
// on the device, the reply comes back once all of them are done (its fingerprints are computed after
// each call on the default stream, so it cannot come sooner). The runner is a fresh one (the caller
// stopped the one before); it is stopped again afterwards.
void time_one_request(const Shape& s, uint64_t seed, int round, Batches& b) {
    // One untimed request first, so the runner's start, its CUDA context and its kernels' loading stay
    // outside the clock; at the small shapes a whole request's worth of calls, so that the GPU has been
    // busy for a while (clocks up) when the clock starts, as it has in every round of every runner.
    remote::request(timed_request(s, (seed + uint64_t(round)) ^ 0x5eedull, s.calls > 2 ? s.calls : 1));
    b.after_warmup = most_of(b.after_warmup, remote::runner_process_report());
    const uint64_t batch_seed = seed + uint64_t(round) * 4 * uint64_t(s.calls + 1);
    const remote::Message req = timed_request(s, batch_seed, s.calls);
    const auto t0 = std::chrono::steady_clock::now();
    const remote::Message reply = remote::request(req, {});
    b.bracket_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    std::vector<std::vector<Digest>> ds;
    for (const auto& d : reply.head.at("timing").at("digests")) {
        const auto slots = d.get<std::vector<double>>();
        if (slots.size() != kDigestSlots * s.outputs.size()) throw remote::RunnerFailure("the runner returned a malformed fingerprint");
        ds.emplace_back();
        for (size_t j = 0; j < s.outputs.size(); ++j) ds.back().push_back(digest_from_slots(slots.data() + kDigestSlots * j));
    }
    if (int(ds.size()) != s.calls) throw remote::RunnerFailure("the runner returned the wrong number of timed calls");
    b.seeds.push_back(batch_seed);
    b.digests.push_back(std::move(ds));
    b.after = most_of(b.after, remote::runner_process_report());
    remote::stop_runner();
}

// What the submission's runner does outside its calls that the harness alone does not: threads left
// running between requests, signal handlers. Empty when nothing.
std::string outside_the_call(const Batches& mine, const Batches& null) {
    const int extra = std::max(mine.after_warmup.threads - null.after_warmup.threads, mine.after.threads - null.after.threads);
    if (extra > 0)
        return fmt::format("the submission left {} thread{} running between calls (its runner had {} after the timed "
                           "requests, the harness alone {}): code that runs outside the call",
                           extra, extra > 1 ? "s" : "", mine.after.threads, null.after.threads);
    const uint64_t extra_handlers = (mine.after.caught_signals | mine.after_warmup.caught_signals) & ~null.after.caught_signals;
    if (extra_handlers) {
        std::vector<std::string> names;
        for (int sig = 1; sig <= 64; ++sig)
            if (extra_handlers >> (sig - 1) & 1) {
                const char* abbrev = sigabbrev_np(sig);
                names.push_back(abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig));
            }
        return fmt::format("the submission installed handlers for {} (the harness alone has none of them): code that runs "
                           "outside the call",
                           fmt::join(names, ", "));
    }
    return "";
}

Shape flash_shape(CublasGemm& gemm, int B, int H, int S, int D, bool causal) {
    Shape s;
    s.name = fmt::format("B={} H={} S={} D={}{}", B, H, S, D, causal ? " causal" : "");
    s.args = {{"B", B}, {"H", H}, {"S", S}, {"D", D}, {"causal", causal}};
    s.flops = 4.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0);
    s.bytes = 4.0 * B * H * double(S) * D * 4;
    const bool large = S > 1024;
    s.calls = large ? 2 : 200, s.batches = large ? 3 : 5;
    s.out_n = size_t(B) * H * S * D;
    s.oracle = [&gemm, B, H, S, D, causal, n = s.out_n](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        DeviceBuffer<float> q(n), k(n), v(n), o(n), scores(1);
        fill_normal(q.get(), n, seed), fill_normal(k.get(), n, seed + 1), fill_normal(v.get(), n, seed + 2);
        sliced_attention_oracle(gemm, q.get(), k.get(), v.get(), o.get(), B * H, S, D, causal, scores);
        return std::vector{digest(o.get(), n, sign_seed(0))};
    };
    s.tol = {2e-5, 1e-4};  // task4/cases.cpp
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
    s.calls = double(B) * L <= 8192 ? 200 : 50, s.batches = 5;
    s.out_n = size_t(B) * H * D;
    s.oracle = [B, H, L, D, n = s.out_n](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        const size_t nc = size_t(B) * H * L * D;
        DeviceBuffer<float> kc(nc), vc(nc), q(n), o(n);
        DeviceBuffer<double> scores(size_t(B) * H * L);
        fill_normal(q.get(), n, seed), fill_normal(kc.get(), nc, seed + 1), fill_normal(vc.get(), nc, seed + 2);
        decode_oracle(q.get(), kc.get(), vc.get(), o.get(), B * H, L, L, D, scores.get());
        return std::vector{digest(o.get(), n, sign_seed(0))};
    };
    s.tol = {2e-5, 1e-4};  // task5/cases.cpp
    // The course's KV-cache speedup: without a cache, each new token recomputes causal attention
    // over every position (here its attention alone, by cuBLAS + softmax).
    s.baseline_name = "no cache: causal attention over all L (cuBLAS + softmax)";
    s.baseline_ms = [&gemm, B, H, L, D](Bencher& bench, json*) { return time_unfused_attention(bench, gemm, B * H, L, D, true); };
    return s;
}

// Part 5b's paged decode (bf16): every sequence L long, its pages shuffled over the pool afresh for every call
// (task5_paged/timed_inputs.h).
// Bytes: K and V read once. The oracle gathers each query head's K and V from the pages as floats and runs the
// double-precision decode oracle; the tolerance is the part's cases' (bf16 output).
Shape paged_shape(int B, int H_q, int H_kv, int L, int D, int page_size) {
    Shape s;
    const task5::timed::Geometry g{B, H_q, H_kv, L, D, page_size};
    s.name = fmt::format("paged decode B={} H_q={} H_kv={} L={} D={} pages of {}", B, H_q, H_kv, L, D, page_size);
    s.op = "timed_paged";
    s.args = {{"B", B}, {"H_q", H_q}, {"H_kv", H_kv}, {"L", L}, {"D", D}, {"page_size", page_size}};
    s.flops = 4.0 * B * H_q * double(L) * D;
    s.bytes = 2.0 * B * H_kv * double(L) * D * 2;
    s.calls = 30, s.batches = 5;
    s.out_n = g.q_elements();
    s.oracle = [g](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        return std::vector{paged_decode_oracle_digest(g, seed, sign_seed(0))};
    };
    s.tol = {4e-3, 1.6e-2};  // task5_paged/cases_paged.cpp
    s.allowance = kTimedErrorAllowanceBf16;
    return s;
}

// Part 4d's bf16 backward: fresh bf16 q, k, v, o, dout a call, lse log(keys seen) + 1/2 a row (task4_bf16_backward/
// timed_inputs.h). FLOPs: the backward's five S×S×D products, 2.5× the forward's four (half with the mask). Bytes: the
// five inputs read and the three gradients written once, bf16. The oracle: cuBLAS float32 from the same o and lse
// (common/cuda/bf16_backward_oracle.h). Each gradient held to the part's cases' tolerance and relative L2 bound
// (task4_bf16_backward/cases_bf16_backward.cpp), fingerprinted apart, so that a timed call's error is named by gradient.
Shape bf16_backward_shape(CublasGemm& gemm, int B, int H, int S, int D, bool causal) {
    Shape s;
    const task4::bf16_backward_timed::Geometry g{B, H, S, D, causal};
    s.name = fmt::format("backward B={} H={} S={} D={}{}", B, H, S, D, causal ? " causal" : "");
    s.op = "timed_bf16_backward";
    s.args = {{"B", B}, {"H", H}, {"S", S}, {"D", D}, {"causal", causal}};
    s.flops = 10.0 * B * H * double(S) * S * D * (causal ? 0.5 : 1.0);
    s.bytes = 8.0 * double(g.elements()) * 2;
    s.calls = S > 2048 ? 10 : 50, s.batches = 5;
    s.outputs = {"dQ", "dK", "dV"};
    s.out_n = g.elements();
    s.oracle = [&gemm, g](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        return bf16_backward_oracle_digests(gemm, g, seed, sign_seed);
    };
    s.tol = {2e-2, 2e-2};  // task4_bf16_backward/cases_bf16_backward.cpp
    s.allowance = kTimedErrorAllowanceBf16;
    s.rel_l2 = 6e-3;  // the references' timed calls: 3.0–3.2e-3 (docs/perf.md, "4d's speed credit")
    return s;
}

// Part 6b's server step: a newcomer's prompt prefilled, then one decode step for the running sequences and it
// (task6_serve/timed_inputs.h: fresh pools, pages shuffled, every call), through the student's prefill_paged and
// decode_paged on their own 4b and 5b kernels. FLOPs: the prompt's causal attention and the step's decode. Bytes: the
// step's K and V read once, the prompt's q, k, v and o. The oracles: cuBLAS float32 for the prefill, double for the
// decode over the pages as the step leaves them (its newcomer's row reads what the prefill stored); both o held to
// the tolerance of 4b's and 5b's cases.
Shape serve_step_shape(CublasGemm& gemm, int B, int H_q, int H_kv, int D, int page_size, int min_cached, int max_cached, int prompt) {
    Shape s;
    const task6::timed::Step g{B, H_q, H_kv, D, page_size, min_cached, max_cached, prompt};
    s.name = fmt::format("server step: a {}-token prompt joins {} sequences of {} … {} H_q={} H_kv={} D={} pages of {}", prompt, B,
                         min_cached, max_cached, H_q, H_kv, D, page_size);
    s.op = "timed_serve_step";
    s.args = {{"B", B},         {"H_q", H_q}, {"H_kv", H_kv},           {"D", D},
              {"page_size", page_size}, {"min_cached", min_cached}, {"max_cached", max_cached}, {"prompt", prompt}};
    s.flops = 2.0 * H_q * double(prompt) * prompt * D + 4.0 * H_q * double(g.positions_after()) * D;
    s.bytes = 2.0 * 2 * double(g.positions_after()) * H_kv * D + 2.0 * (2 * g.prompt_q_elements() + 2 * g.prompt_kv_elements());
    s.calls = 30, s.batches = 5;
    s.outputs = {"prefill o", "decode o"};
    s.out_n = g.prompt_q_elements(), s.out_sizes = {g.prompt_q_elements(), g.step_q_elements()};
    s.oracle = [&gemm, g](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        return serve_step_oracle_digests(gemm, g, seed, sign_seed);
    };
    s.tol = {4e-3, 1.6e-2};  // task4_bf16/cases_bf16.cpp and task5_paged/cases_paged.cpp: the same for both
    // Twice the other bf16 parts' allowance: the prompt's causal rows include rows of a few keys, where bf16's rounding
    // of the probabilities and of o is a large share of the tolerance (the reference's prefill at 0.031–0.050 of it,
    // its decode at 0.025–0.036; H200, docs/perf.md "6b's speed credit"); the exploits that skip work, at 1.2 and over.
    s.allowance = 2 * kTimedErrorAllowanceBf16;
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
    s.calls = s.out_n > (size_t(1) << 24) ? 50 : 400, s.batches = 5;
    s.oracle = [rows, cols, n = s.out_n](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        DeviceBuffer<float> x(n);
        fill_normal(x.get(), n, seed);
        softmax_oracle(x.get(), rows, cols);
        return std::vector{digest(x.get(), n, sign_seed(0))};
    };
    s.tol = {1e-6, 1e-4};  // task2/cases.cpp, softmax
    return s;
}

// Task 2's GEMMs (C = A·B or A·Bᵀ, fp32), against cuBLAS SGEMM (TF32 off) on the same inputs.
Shape gemm_shape(CublasGemm& gemm, bool nt, int M, int N, int K) {
    Shape s;
    s.name = fmt::format("{} M={} N={} K={}", nt ? "gemm_nt" : "gemm_nn", M, N, K);
    s.args = {{"kind", nt ? "gemm_nt" : "gemm_nn"}, {"M", M}, {"N", N}, {"K", K}};
    s.out_n = size_t(M) * N;
    s.flops = 2.0 * M * double(N) * K, s.bytes = 4.0 * (double(M) * K + double(K) * N + double(M) * N);
    s.calls = 10, s.batches = 3;
    auto run = [&gemm, nt, M, N, K](const float* a, const float* b, float* c) {
        if (nt) gemm.nt(a, b, c, 1, M, N, K);
        else gemm.nn(a, b, c, 1, M, N, K);
    };
    s.oracle = [run, M, N, K, n = s.out_n](uint64_t seed, const std::function<uint64_t(int)>& sign_seed) {
        DeviceBuffer<float> a(size_t(M) * K), b(size_t(K) * N), c(n);
        fill_normal(a.get(), a.size(), seed), fill_normal(b.get(), b.size(), seed + 1);
        run(a.get(), b.get(), c.get());
        return std::vector{digest(c.get(), n, sign_seed(0))};
    };
    s.tol = {2e-5 * std::sqrt(double(K)), 1e-4};  // task2/cases.cpp, GEMM
    s.baseline_name = "cuBLAS SGEMM";
    s.baseline_ms = [run, M, N, K](Bencher& bench, json*) {
        DeviceBuffer<float> a(size_t(M) * K), b(size_t(K) * N), c(size_t(M) * N);
        fill_normal(a.get(), a.size(), 91), fill_normal(b.get(), b.size(), 92);
        return bench.time([&] { run(a.get(), b.get(), c.get()); }).median_ms;
    };
    return s;
}

std::vector<Shape> shapes_of(const std::string& part, CublasGemm& gemm) {
    if (part == "5b")  // GQA 32 over 8 (course), a long context, a large batch, MQA: pages of 64
        return {paged_shape(64, 32, 8, 4096, 128, 64), paged_shape(8, 32, 8, 32768, 128, 64), paged_shape(256, 32, 8, 1024, 128, 64),
                paged_shape(64, 32, 1, 4096, 128, 64)};
    if (part == "6b")  // a long running batch beside a short prompt (the decode's share), a long prompt (the prefill's)
        return {serve_step_shape(gemm, 63, 32, 8, 128, 16, 64, 8192, 2048), serve_step_shape(gemm, 15, 32, 8, 128, 64, 64, 4096, 8192)};
    if (part == "4d")  // the course's shape, causal and not; D = 64; short rows no tile divides (S = 1000), causal
        return {bf16_backward_shape(gemm, 4, 16, 4096, 128, false), bf16_backward_shape(gemm, 4, 16, 4096, 128, true),
                bf16_backward_shape(gemm, 4, 32, 4096, 64, false), bf16_backward_shape(gemm, 16, 16, 1000, 128, true)};
    const int task = std::atoi(part.c_str());
    if (task == 2)
        return {gemm_shape(gemm, false, 4096, 4096, 4096), gemm_shape(gemm, true, 4096, 4096, 4096),
                gemm_shape(gemm, false, 4095, 4097, 4093), softmax_shape(16384, 4096), softmax_shape(4000, 1000)};
    if (task == 4)
        return {flash_shape(gemm, 4, 32, 128, 128, false), flash_shape(gemm, 4, 32, 128, 128, true),
                flash_shape(gemm, 64, 32, 4096, 128, false), flash_shape(gemm, 64, 32, 4096, 128, true)};
    if (task == 5)
        return {decode_shape(gemm, 1, 32, 1024, 128), decode_shape(gemm, 1, 32, 8192, 128), decode_shape(gemm, 1, 32, 32768, 128),
                decode_shape(gemm, 8, 32, 8192, 128), decode_shape(gemm, 32, 32, 4096, 128)};
    throw std::invalid_argument(fmt::format("task {} has no timed shapes", part));
}

// Per call, what the submission's requests took beyond the null runner's (the harness alone: inputs
// made, outputs poisoned, L2 flushed, fingerprints, the request itself): the median over the rounds of
// each round's difference. Paired by round, a drift of the GPU's clocks or of the host's load over the
// measurement cancels; and as every round starts fresh processes, what one process's luck costs or
// saves (where its buffers landed) is one sample of the median, not the whole measurement.
double per_call_ms(const Batches& side, const Batches& null, int calls) {
    std::vector<double> diff;
    for (size_t r = 0; r < side.bracket_ms.size() && r < null.bracket_ms.size(); ++r)
        diff.push_back(side.bracket_ms[r] - null.bracket_ms[r]);
    return median(diff) / calls;
}

// How long one shape's timing of the submission may take: a correct kernel too slow for it (one block per head, say)
// is marked at that shape, and the others are still timed, instead of one shape spending the measurement's budget.
// ATTNLAB_SHAPE_BUDGET_S (the grader's environment, set by staff: a check of the "too slow" path) overrides it.
double shape_budget_s() {
    const char* v = std::getenv("ATTNLAB_SHAPE_BUDGET_S");
    const double s = v && *v ? std::atof(v) : 0;
    return s > 0 ? s : 120.0;
}

// One call of the submission at the shape, on its own: its seconds, request included. The first request also starts
// the runner and loads its kernels (well under kStartS); when it is too slow for the budget by more than that, a second
// request says what one call alone takes. Empty `why` when it finished; else why not (a timeout, a crash).
constexpr double kStartS = 5;
double probe_one_call(const Shape& s, uint64_t seed, int needed, std::string& why, std::string& launches) {
    try {
        double t = 0;
        for (uint64_t i = 0; i < 2; ++i) {
            remote::Message req = timed_request(s, seed ^ (0x9b0beull + i), 1);
            req.head["launch_log"] = true;  // untimed: the runner records the call's kernel launches (launch_log.h)
            const auto t0 = std::chrono::steady_clock::now();
            remote::request(req);
            t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            launches = remote::launches_of_last_call();
            if (t * needed <= shape_budget_s() || t > kStartS) break;  // fast enough, or too slow whatever the start cost
        }
        remote::stop_runner();
        return t;
    } catch (const std::exception& e) {
        launches = remote::launches_of_last_call();
        remote::stop_runner();
        why = e.what();
        return -1;
    }
}

json measure_shape(const Shape& s, const std::string& bin_dir, const std::string& ref_bin_dir, std::mt19937_64& g,
                   Bencher& bench, bool with_baselines) {
    json row = {{"name", s.name}, {"flops", s.flops}, {"bytes", s.bytes}, {"calls", s.calls}, {"batches", s.batches}};
    const uint64_t seed = g() >> 20, ref_seed = g() >> 20, null_seed = g() >> 20;
    {
        remote::use_runner_dir(bin_dir);
        std::string why, launches;
        const int needed = (s.calls + (s.calls > 2 ? s.calls : 1)) * s.batches;  // warm-up and timed calls, every round
        const double one = probe_one_call(s, seed, needed, why, launches);
        if (!launches.empty()) row["launches"] = launches;
        if (one < 0 && why.find("timed out") == std::string::npos) {
            row["failed_calls"] = 1, row["checked_calls"] = 0, row["reason"] = why, row["ms"] = 0;
            return row;
        }
        if (one < 0 || one * needed > shape_budget_s()) {
            row["too_slow"] = one < 0 ? fmt::format("one call did not finish: {}", why)
                                      : fmt::format("one call took {:.3g} s; its timing makes {} calls (≈ {:.0f} s), over the {:.0f} s "
                                                    "a shape may take", one, needed, one * needed, shape_budget_s());
            row["ms"] = one < 0 ? 0.0 : 1e3 * one;
            return row;
        }
    }
    Batches null, mine, ref;
    // `batches` rounds, one request of each runner a round, one runner alive at a time (nothing of the
    // submission's runs while another is timed), each a fresh process. The submission's request sits in
    // the middle of its round and the other two swap places from round to round (null, mine, ref; ref,
    // mine, null; …), so that a drift over the rounds weighs on both sides of every difference alike.
    auto time_null = [&](int r) { remote::with_null_runner([&] { time_one_request(s, null_seed, r, null); }); };
    auto time_ref = [&](int r) {
        if (ref_bin_dir.empty()) return;
        remote::use_runner_dir(ref_bin_dir);
        time_one_request(s, ref_seed, r, ref);
    };
    for (int r = 0; r < s.batches; ++r) {
        r % 2 ? time_ref(r) : time_null(r);
        remote::use_runner_dir(bin_dir);
        try {
            time_one_request(s, seed, r, mine);
        } catch (const std::exception& e) {
            remote::stop_runner();
            row["failed_calls"] = 1, row["checked_calls"] = 0, row["reason"] = e.what(), row["ms"] = 0;
            return row;
        }
        r % 2 ? time_null(r) : time_ref(r);
    }
    row["harness_ms"] = median(null.bracket_ms) / s.calls;
    const std::string outside = outside_the_call(mine, null);
    if (!ref_bin_dir.empty()) row["ref_ms"] = per_call_ms(ref, null, s.calls), row["ref_bracket_ms"] = ref.bracket_ms;
    row["ms"] = per_call_ms(mine, null, s.calls), row["bracket_ms"] = mine.bracket_ms, row["null_bracket_ms"] = null.bracket_ms;
    // Every call's output must be finite (outputs are poisoned before each call), unlike every other call's (each
    // had its own inputs), and the oracle's output for its inputs within a checked call's tolerance and precision
    // (digest.h: the error estimated from random projections, in tolerances). Every call: a submission that computes
    // otherwise in some of its timed calls only is caught in those.
    int checked = 0, failed = 0;
    double worst_ratio = 0, worst_rel_l2 = 0;
    std::vector<double> worst_of(s.outputs.size(), 0.0);  // each output's largest error, in tolerances
    std::string reason;
    auto fail = [&](std::string why) {
        if (failed++ == 0) reason = std::move(why);
    };
    std::map<std::pair<double, double>, int> seen;
    const auto check_start = std::chrono::steady_clock::now();
    for (size_t r = 0; r < mine.digests.size(); ++r)
        for (size_t i = 0; i < mine.digests[r].size(); ++i) {
            const std::vector<Digest>& got = mine.digests[r][i];
            const int call = int(r * size_t(s.calls) + i) + 1;
            ++checked;
            // "timed call 3" or, with named outputs, "timed call 3's dQ"
            auto what = [&](size_t j) { return s.outputs[j].empty() ? fmt::format("timed call {}", call) : fmt::format("timed call {}'s {}", call, s.outputs[j]); };
            auto nonfinite = std::find_if(got.begin(), got.end(), [](const Digest& d) { return d.nonfinite > 0; });
            if (nonfinite != got.end()) {
                fail(fmt::format("{}: {:.0f} of its outputs are NaN/Inf (work skipped, or not finished when the call returned)",
                                 what(size_t(nonfinite - got.begin())), nonfinite->nonfinite));
                continue;
            }
            if (auto [it, fresh] = seen.emplace(std::pair{got[0].sum, got[0].sumsq}, call); !fresh) {
                fail(fmt::format("timed calls {} and {} gave the same output for different inputs", it->second, call));
                continue;
            }
            const uint64_t batch_seed = mine.seeds[r];
            const std::vector<Digest> want =
                s.oracle(batch_seed + 4 * uint64_t(i), [&](int j) { return timed_sign_seed(batch_seed, int(i), j); });
            for (size_t j = 0; j < got.size(); ++j) {
                const double ratio = digest_error_ratio(got[j], want[j], s.size_of(j), s.tol), rel = digest_relative_error(got[j], want[j]);
                worst_ratio = std::max(worst_ratio, ratio), worst_rel_l2 = std::max(worst_rel_l2, rel);
                if (j < worst_of.size()) worst_of[j] = std::max(worst_of[j], ratio);
                if (!digests_agree(got[j], want[j], s.size_of(j), s.tol, s.allowance)) {
                    fail(fmt::format("{}: its RMS error against the oracle is {:.3g} of a checked call's tolerance (atol {:g}, "
                                     "rtol {:g}; estimated from {} random projections of its {} outputs), over the {:g} that {} "
                                     "arithmetic stays far under: a timed call is held to a checked call's tolerance and "
                                     "precision (computed at lower precision, or approximated, when timed?)",
                                     what(j), ratio, s.tol.atol, s.tol.rtol, kProjections, s.size_of(j), s.allowance,
                                     s.allowance == kTimedErrorAllowance ? "fp32" : "the part's"));
                    break;
                }
                if (s.rel_l2 > 0 && rel > kEstimateRoom * s.rel_l2) {
                    fail(fmt::format("{}: its relative L2 error against the oracle is {:.3g} (estimated from {} random "
                                     "projections), over the {:g} a timed call may have (a checked call's bound, {:g}, and the "
                                     "estimate's spread): a timed call is held to a checked call's tolerance and precision "
                                     "(computed at lower precision, or approximated, when timed?)",
                                     what(j), rel, kProjections, kEstimateRoom * s.rel_l2, s.rel_l2));
                    break;
                }
            }
        }
    row["checked_calls"] = checked, row["failed_calls"] = failed, row["reason"] = reason;
    row["check_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - check_start).count();  // its cost
    row["checked_error_ratio"] = worst_ratio;  // the largest error of a checked timed call, in tolerances
    if (s.outputs.size() > 1) row["checked_error_ratios"] = worst_of;  // and of each output
    if (s.rel_l2 > 0) row["checked_relative_l2"] = worst_rel_l2;  // and its largest relative L2 error, where bounded
    if (!outside.empty()) row["timing_flag"] = outside;
    if (!with_baselines) return row;
    json mem;
    if (s.baseline_ms) row["baselines"] = {{s.baseline_name, s.baseline_ms(bench, s.memory_side_by_side ? &mem : nullptr)}};
    if (s.memory_side_by_side) {
        mem["io_bytes"] = s.bytes, mem["flush_bytes"] = 2.0 * double(device_info().l2_bytes);
        try {
            remote::with_null_runner([&] { mem["null_peak_bytes"] = runner_memory(s, seed ^ 0x3e4u); });
            remote::use_runner_dir(bin_dir);
            mem["submission_peak_bytes"] = runner_memory(s, seed ^ 0x3e3u);
        } catch (const std::exception& e) {
            mem["submission_error"] = e.what();
        }
        row["memory"] = mem;
    }
    return row;
}

}  // namespace

int measure_performance(const std::string& part, const std::string& bin_dir, const std::string& ref_bin_dir_in, bool with_baselines) {
    const int task = std::atoi(part.c_str());  // "5" or "5b": part 5b runs in Task 5's runner
    // without the reference's runner for this task (the student kit), the submission is timed alone
    const std::string ref_bin_dir =
        access(fmt::format("{}/runner_task{}", ref_bin_dir_in, task).c_str(), X_OK) == 0 ? ref_bin_dir_in : "";
    return run_benchmark("grader --measure-perf", stderr, [&](BenchContext& ctx) {
        remote::use_task(task);
        CublasGemm gemm;
        auto g = rng_for(fmt::format("perf.task{}", part));
        json rows = json::array();
        for (const Shape& s : shapes_of(part, gemm)) {
            rows.push_back(measure_shape(s, bin_dir, ref_bin_dir, g, ctx.bencher, with_baselines));
            fmt::print(stderr, "{}\n", rows.back().dump());
        }
        fmt::print("{}\n", json{{"gpu", ctx.device.name}, {"copy_gbps", ctx.ceilings.copy_gbps},
                                {"sgemm_tflops", ctx.ceilings.sgemm_tflops}, {"reference_timed", !ref_bin_dir.empty()},
                                {"measurements", rows}}
                               .dump());
    });
}

}  // namespace grader
