// gpt2_main.cpp — GPT-2 on your kernels from the command line: streams the text and prints tokens/s.
//   make task7 PROMPT="And God said" TOKENS=50 [ARGS="--top-k 10 --temperature 0.95 --seed 7"]
//   gpt2 [--model DIR] [--prompt TEXT] [--tokens N] [--top-k K --temperature T --seed S]
//   gpt2 --ids ...              prints {"prompt": [...], "ids": [...]} (JSON) instead of the text
//   gpt2 --bench S --tokens N   a random prompt of S tokens: prefill ms and decode tokens/s (JSON)
// The model: --model, else $GPT2_DIR, else models/kjv-gpt2 (`make model`).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "common/cuda/device.h"
#include "task7/gpt2.h"
#include "task7/tokenizer.h"

namespace {

struct Args {
    std::string model = gpt2::default_model_dir(), prompt = "What are the advantages of using flashattention kernels in "
                                                              "large language model inference?";
    int tokens = 50, bench = 0;
    bool ids = false;
    gpt2::Sampling sampling;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
            return argv[++i];
        };
        if (k == "--model") a.model = value();
        else if (k == "--prompt") a.prompt = value();
        else if (k == "--tokens") a.tokens = std::stoi(value());
        else if (k == "--top-k") a.sampling.top_k = std::stoi(value());
        else if (k == "--temperature") a.sampling.temperature = std::stof(value());
        else if (k == "--seed") a.sampling.seed = std::stoull(value());
        else if (k == "--bench") a.bench = std::stoi(value());
        else if (k == "--ids") a.ids = true;
        else throw std::invalid_argument("unknown option " + k + " (see the top of task7/gpt2_main.cpp)");
    }
    if (a.tokens < (a.bench > 0 ? 0 : 1)) throw std::invalid_argument("--tokens must be ≥ 1 (≥ 0 with --bench)");
    return a;
}

// A prompt of S tokens, prefill and decode timed with events (task6/timing.h), as JSON.
void bench(const std::shared_ptr<const gpt2::Checkpoint>& ck, int S, int tokens) {
    std::vector<int> prompt(static_cast<size_t>(S));
    for (int i = 0; i < S; ++i) prompt[size_t(i)] = int((uint64_t(i) * 2654435761u) % uint64_t(ck->cfg.vocab));
    if (S + tokens > ck->cfg.n_positions)
        throw std::invalid_argument(fmt::format("--bench {} with --tokens {} passes the model's {} positions", S, tokens, ck->cfg.n_positions));
    gpt2::Engine e(ck, 1, S + tokens);
    auto run = [&] {
        cudaEvent_t ev[3];
        for (auto& x : ev) CUDA_CHECK(cudaEventCreate(&x));
        CUDA_CHECK(cudaEventRecord(ev[0]));
        e.prefill(prompt, S);
        CUDA_CHECK(cudaEventRecord(ev[1]));
        for (int i = 0; i < tokens; ++i) e.decode();
        CUDA_CHECK(cudaEventRecord(ev[2]));
        CUDA_CHECK(cudaEventSynchronize(ev[2]));
        float prefill = 0, decode = 0;
        CUDA_CHECK(cudaEventElapsedTime(&prefill, ev[0], ev[1]));
        CUDA_CHECK(cudaEventElapsedTime(&decode, ev[1], ev[2]));
        for (auto& x : ev) cudaEventDestroy(x);
        return std::pair<double, double>(prefill, decode);
    };
    run();  // warm-up
    const auto [prefill_ms, decode_ms] = run();
    nlohmann::json j{{"engine", "attnlab"}, {"prompt_tokens", S}, {"new_tokens", tokens}, {"prefill_ms", prefill_ms}};
    if (tokens > 0) j["decode_tokens_per_s"] = tokens * 1000.0 / decode_ms;
    fmt::print("{}\n", j.dump());
}

int run(const Args& a) {
    std::string why;
    if (!attn::has_cuda_device(&why)) {
        fmt::print(stderr, "gpt2: no CUDA device ({})\n", why);
        return 77;
    }
    const auto ck = gpt2::Checkpoint::load(a.model);
    if (a.bench > 0) {
        bench(ck, a.bench, a.tokens);
        return 0;
    }
    const gpt2::Tokenizer tok;
    const std::vector<int> ids = tok.encode(a.prompt);
    if (ids.empty()) throw std::invalid_argument("the prompt is empty");
    if (int(ids.size()) + a.tokens > ck->cfg.n_positions)
        throw std::invalid_argument(fmt::format("{} prompt tokens + {} new ones pass the model's {} positions", ids.size(), a.tokens,
                                                ck->cfg.n_positions));
    gpt2::Engine e(ck, 1, int(ids.size()) + a.tokens);
    e.set_sampling(a.sampling);
    if (!a.ids) fmt::print(stderr, "{} ({})\n", ck->cfg.describe(), a.model);
    if (!a.ids) fmt::print("{}", a.prompt), std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    e.prefill(ids, int(ids.size()));
    for (int i = 0; i < a.tokens; ++i) {
        if (i > 0) e.decode();
        if (!a.ids) fmt::print("{}", tok.token_bytes(e.tokens().back())), std::fflush(stdout);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (a.ids) {
        const std::vector<int> all = e.tokens();
        fmt::print("{}\n", nlohmann::json{{"prompt", ids}, {"ids", std::vector<int>(all.begin() + long(ids.size()), all.end())}}.dump());
    } else {
        fmt::print("\n");
        fmt::print(stderr, "{} tokens in {:.3f} s: {:.1f} tokens/s ({}; printing each token as it comes)\n", a.tokens, s,
                   a.tokens / s, a.sampling.top_k > 0 ? fmt::format("top-k {}, temperature {}, seed {}", a.sampling.top_k,
                                                                    a.sampling.temperature, a.sampling.seed)
                                                      : "greedy");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (const std::exception& e) {
        fmt::print(stderr, "gpt2: {}\n", e.what());
        return 1;
    }
}
