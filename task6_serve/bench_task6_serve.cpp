// bench_task6_serve.cpp — Task 6b's serving benchmark: one seeded trace of requests served twice on the student's
// pages and kernels, with the same pool of KV-cache memory:
//   paged     an admission promises each request the pages of its own length (PagedAttention)
//   max_seq   an admission promises max_seq positions to every sequence: the memory a cache reserved per sequence at
//             the model's longest length needs (the same kernels and pages, only the promise differs)
// For each: tokens/s, TBT p50/p90 (between a request's consecutive tokens, prefills of newcomers included), TTFT
// p50/p90 (its arrival step's start → its first token), the largest batch that ran and the pages in use; then the
// largest batch each way that the GPU's free memory would hold, from the measured free memory and the trace's lengths.
// Every request's tokens are checked against the oracle run alone (the first --check requests; 0: none).
//   make bench-task6-serve IMPL=reference [ARGS="--quick --pool-gb 2 --requests 256 --csv DIR"]
// --csv DIR writes each run's steps (DIR/serve_steps_<way>.csv, for tools/pictures/plot_serving.py) and requests
// (DIR/serve_requests_<way>.csv: when each arrived, started and finished, its TTFT and median TBT).
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "common/cuda/cuda_check.h"
#include "task6/timing.h"
#include "task6_serve/engine.h"
#include "task6_serve/serving_model.h"

using namespace task6;

namespace {

struct Args {
    double pool_gb = 2.0;
    int requests = 256, check = 4;
    bool quick = false;
    std::string csv;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        const auto value = [&] {
            if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
            return std::string(argv[++i]);
        };
        if (k == "--quick") a.quick = true;
        else if (k == "--pool-gb") a.pool_gb = std::atof(value().c_str());
        else if (k == "--requests") a.requests = std::atoi(value().c_str());
        else if (k == "--check") a.check = std::atoi(value().c_str());
        else if (k == "--csv") a.csv = value();
        else throw std::invalid_argument(fmt::format("unknown option {} (--quick, --pool-gb G, --requests N, --check N, --csv DIR)", k));
    }
    return a;
}

// Llama-like proportions at a size whose fp32 prefills leave the decode steps in view: 16 query heads of 128 over
// 4 KV heads, 12 layers, 0.76 B parameters.
ModelConfig bench_model(bool quick) {
    ModelConfig c;
    c.vocab = 8192, c.hidden = 2048, c.heads = 16, c.kv_heads = 4, c.layers = quick ? 4 : 12, c.ffn = 4 * 2048;
    c.max_seq = 2048, c.batch = 1, c.seed = 6400;
    return c;
}

// Prompts 16 … 512 tokens, 64 … 512 new ones, a few arriving each step.
std::vector<Request> bench_trace(const ModelConfig& c, int n) {
    std::mt19937_64 g(6401);
    std::vector<Request> trace;
    for (int i = 0; i < n; ++i) {
        std::vector<int> prompt(size_t(16 + g() % 497));
        for (int& t : prompt) t = int(g() % uint64_t(c.vocab));
        trace.push_back({i / 4, prompt, int(64 + g() % 449)});
    }
    return trace;
}

int oracle_disagreements(const ModelConfig& c, const std::vector<Request>& trace, const ServeReport& rep, int n) {
    int bad = 0, longest = 1;
    for (int i = 0; i < n; ++i) longest = std::max(longest, int(rep.requests[size_t(i)].tokens.size()));
    ServingModel oracle(std::make_shared<Weights>(c), longest);
    for (int i = 0; i < n; ++i) {
        const std::vector<int>& t = rep.requests[size_t(i)].tokens;
        const attn::Tensor all = oracle.all_logits(std::vector<int>(t.begin(), t.end() - 1));
        const int S = int(trace[size_t(i)].prompt.size()), V = c.vocab;
        for (size_t j = size_t(S); j < t.size(); ++j) {
            const float* row = all.ptr() + (j - 1) * size_t(V);
            const int best = greedy_token(row, V);  // a tie within the tests' tolerance is no disagreement (cases_serve.cpp)
            if (best != t[j] && row[best] - row[t[j]] > kServingTolerance.atol + kServingTolerance.rtol * std::fabs(row[best])) ++bad;
        }
    }
    return bad;
}

void write_csv(const std::string& dir, const char* way, const std::vector<Request>& trace, const ServeReport& rep, int pool_pages,
               int page_size) {
    std::ofstream r(dir + "/serve_requests_" + way + ".csv");
    r << "request,prompt,new_tokens,arrival_step,admitted_step,finished_step,ttft_ms,tbt_median_ms\n";
    for (size_t i = 0; i < trace.size(); ++i) {
        const RequestReport& q = rep.requests[i];
        r << i << ',' << trace[i].prompt.size() << ',' << trace[i].new_tokens << ',' << q.arrival_step << ',' << q.admitted_step << ','
          << q.finished_step << ',' << q.ttft_ms << ',' << (q.tbt_ms.empty() ? 0.0 : percentile(q.tbt_ms, 0.5)) << '\n';
    }
    std::ofstream f(dir + "/serve_steps_" + way + ".csv");
    f << "step,running,prefills,pages_in_use,pages_promised,tokens_in_cache,end_ms,pool_pages,page_size\n";
    for (size_t s = 0; s < rep.steps.size(); ++s) {
        const StepReport& x = rep.steps[s];
        f << s << ',' << x.running << ',' << x.prefills << ',' << x.pages_in_use << ',' << x.pages_promised << ','
          << x.tokens_in_cache << ',' << x.end_ms << ',' << pool_pages << ',' << page_size << '\n';
    }
}

}  // namespace

int main(int argc, char** argv) try {
    const Args a = parse(argc, argv);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fmt::print("skipped: no CUDA device\n");
        return 0;
    }
    const ModelConfig c = bench_model(a.quick);
    const std::vector<Request> trace = bench_trace(c, a.quick ? 48 : a.requests);
    const int page_size = 16;
    const size_t per_token = ServingModel::kv_bytes_per_token(c);
    const int num_pages = int(a.pool_gb * 1e9 / (double(per_token) * page_size));
    auto weights = std::make_shared<Weights>(c);
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    fmt::print("{}: {}\n{} requests (prompts 16 … 512, 64 … 512 new tokens, 4 arriving a step); KV cache {:.1f} KB a token "
               "(bf16), a pool of {:.2f} GB = {} pages of {}\n",
               prop.name, c.describe(), trace.size(), per_token / 1e3, a.pool_gb, num_pages, page_size);
    double mean_final = 0;
    for (const Request& q : trace) mean_final += double(q.prompt.size() + size_t(q.new_tokens) - 1) / double(trace.size());
    size_t free_b = 0, total_b = 0;
    for (const Reservation way : {Reservation::per_request, Reservation::max_seq}) {
        const char* name = way == Reservation::per_request ? "paged" : "max_seq";
        ServeOptions o;
        o.page_size = page_size, o.num_pages = num_pages, o.max_batch = 256, o.reservation = way;
        o.keep_logits = false, o.check_pool_fully = false;
        ServingModel model(weights, 512, page_size, num_pages);
        if (way == Reservation::per_request) CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        serve(model, std::vector<Request>(trace.begin(), trace.begin() + 8), o);  // warm-up: cuBLAS plans, first launches
        const ServeReport rep = serve(model, trace, o);
        std::vector<double> tbt, ttft;
        for (const RequestReport& r : rep.requests) {
            tbt.insert(tbt.end(), r.tbt_ms.begin(), r.tbt_ms.end());
            ttft.push_back(r.ttft_ms);
        }
        double decode_ms = 0;
        int decode_steps = 0;
        for (size_t s = 0; s < rep.steps.size(); ++s)
            if (rep.steps[s].running > 0 && rep.steps[s].prefills == 0)
                decode_ms += rep.steps[s].end_ms - (s ? rep.steps[s - 1].end_ms : 0), ++decode_steps;
        fmt::print("{:<8} {:7.0f} tokens/s ({} tokens in {:.2f} s, {} steps)  TBT p50 {:.2f} ms p90 {:.2f} ms  TTFT p50 {:.0f} ms "
                   "p90 {:.0f} ms  largest batch {}  pages in use ≤ {} of {} ({:.0f}%)  decode-only steps {:.2f} ms mean\n",
                   name, rep.generated_tokens / (rep.total_ms / 1e3), rep.generated_tokens, rep.total_ms / 1e3, rep.steps.size(),
                   percentile(tbt, 0.5), percentile(tbt, 0.9), percentile(ttft, 0.5), percentile(ttft, 0.9), rep.peak_running,
                   rep.peak_pages, num_pages, 100.0 * rep.peak_pages / num_pages, decode_steps ? decode_ms / decode_steps : 0.0);
        if (a.check > 0) {
            const int n = std::min<int>(a.check, int(trace.size()));
            fmt::print("         the first {} requests against the oracle run alone: {} greedy tokens disagree beyond the tolerance\n", n,
                       oracle_disagreements(c, trace, rep, n));
        }
        if (!a.csv.empty()) write_csv(a.csv, name, trace, rep, num_pages, page_size);
    }
    // The largest batch the whole GPU would hold: the free memory with the weights and one model's activations in place.
    const double cache_bytes = double(free_b) + a.pool_gb * 1e9 - 1e9;  // 1 GB left for the workspace
    fmt::print("the GPU's free memory for the cache ≈ {:.1f} GB (measured free + this pool − 1 GB): a cache reserved at "
               "max_seq {} holds {} sequences; pages hold {} of this trace's (mean length {:.0f})\n",
               cache_bytes / 1e9, c.max_seq, int(cache_bytes / (double(per_token) * c.max_seq)),
               int(cache_bytes / (double(per_token) * page_size * std::ceil(mean_final / page_size + 0.5))), mean_final);
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "bench_task6_serve: {}\n", e.what());
    return 1;
}
