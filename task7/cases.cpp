// cases.cpp — Task 7's graded cases: GPT-2 on the student's kernels (Tasks 4–6), token for token.
//   golden  a small random-weight GPT-2 that tools/goldens/make_goldens.py writes in Hugging Face's layout,
//           with torch's greedy tokens and every step's logits (float64, no cache) for two prompts
//   model   the default model (`make model`, or GPT2_DIR) against the reference that `make model`
//           wrote beside it; the generated text, greedy and sampled, goes into Results.md
// Each prompt is tokenised by the C++ tokenizer and must give tiktoken's ids; the run then follows
// the reference's tokens step by step (llm::check_step: logits within tolerance, same greedy token).
#include "task7/cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <chrono>

#include "common/check.h"
#include "common/golden.h"
#include "common/llm/greedy_check.h"
#include "common/llm/remote_model.h"
#include "common/remote/runner.h"
#include "common/llm/utf8.h"
#include "common/safetensors.h"
#include "task7/gpt2.h"
#include "task7/tokenizer.h"

namespace task7 {
namespace {

using namespace attn;

// The prompts of the exact-match checks: the same text as PROMPTS in tools/goldens/llm_reference.py.
const char* const kCoursePrompt = "What are the advantages of using flashattention kernels in large language model inference?";
const char* const kSecondPrompt = "And God said unto Moses,";

// GPT-2 on the student's kernels, in the runner: it may read the checkpoint's two files, nothing else.
llm::RemoteModel student_engine(const std::string& dir, const gpt2::Config& cfg, int max_seq, const gpt2::Sampling& s = {}) {
    char abs[PATH_MAX];
    const std::string where = realpath(dir.c_str(), abs) ? abs : dir;
    for (const char* f : {"/config.json", "/model.safetensors"}) attn::remote::allow_read(where + f);
    return llm::RemoteModel({{"checkpoint", where}, {"batch", 1}, {"max_seq", max_seq}, {"top_k", s.top_k},
                             {"temperature", s.temperature}, {"seed", s.seed}},
                            1, cfg.vocab);
}

const gpt2::Tokenizer& tokenizer() {
    static const gpt2::Tokenizer t;
    return t;
}

// Prompt `i` of a reference file (prompt{i}, tokens{i}, logits{i}) on the checkpoint `ck`.
CaseResult match_reference(const std::string& dir, const gpt2::Config& cfg, const std::string& reference, int i,
                           const std::string& prompt) {
    const SafetensorsFile f(reference, "run \"make goldens\" (the small model) or \"make model\" (the default one)");
    const int steps = std::stoi(f.metadata("steps"));
    const Tolerance tol{std::stod(f.metadata("atol")), std::stod(f.metadata("rtol"))};
    const std::vector<int> want_prompt = llm::ids_of(f.load_f32(fmt::format("prompt{}", i)));
    const std::vector<int> want_tokens = llm::ids_of(f.load_f32(fmt::format("tokens{}", i), {1, steps + 1}));
    const Tensor want_logits = f.load_f32(fmt::format("logits{}", i), {steps + 1, 1, cfg.vocab});
    CaseResult r;
    const int S = int(want_prompt.size());
    r.shape = fmt::format("{}; prompt of {} tokens + {} greedy", cfg.describe(), S, steps);
    const std::vector<int> ids = tokenizer().encode(prompt);
    if (ids != want_prompt) {
        r.reason = fmt::format("the tokenizer's {} ids for the prompt differ from tiktoken's {}", ids.size(), want_prompt.size());
        return r;
    }
    llm::RemoteModel e = student_engine(dir, cfg, S + steps + 1);
    r.ms = wall_ms([&] { llm::follow_reference(r, e, ids, S, steps, want_tokens, want_logits, tol); });
    return r;
}

// `tokens` new tokens after `prompt` (batch 1), their ids; decode tokens/s by the host's clock.
std::vector<int> generate(const std::string& dir, const gpt2::Config& cfg, const std::string& prompt, int tokens,
                     const gpt2::Sampling& s, double* tokens_per_s) {
    const std::vector<int> ids = tokenizer().encode(prompt);
    llm::RemoteModel e = student_engine(dir, cfg, int(ids.size()) + tokens + 1, s);
    e.prefill(ids, int(ids.size()));
    const auto t0 = std::chrono::steady_clock::now();  // this side's clock: each step's reply means it is done
    for (int i = 1; i < tokens; ++i) e.decode();
    const double s_elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (tokens_per_s) *tokens_per_s = (tokens - 1) / s_elapsed;
    std::vector<int> all = e.tokens();
    return std::vector<int>(all.begin() + long(ids.size()), all.end());
}

// What the report may say of the greedy text: equal to torch's greedy tokens (prompt 0 of the
// reference), or where it leaves them — a tie within float32 noise can send a free run elsewhere.
std::string greedy_label(const std::string& reference, const std::vector<int>& greedy) {
    const SafetensorsFile f(reference, "run \"make model\"");
    const int steps = std::stoi(f.metadata("steps"));
    const std::vector<int> want = llm::ids_of(f.load_f32("tokens0", {1, steps + 1}));
    const size_t n = std::min(greedy.size(), want.size());
    const size_t first = size_t(std::mismatch(greedy.begin(), greedy.begin() + long(n), want.begin()).first - greedy.begin());
    if (first == n) return fmt::format("greedy, token for token equal to the torch reference's {} tokens", n);
    return fmt::format("greedy; equal to the torch reference's tokens up to token {} of {}, then a different path", first, n);
}

CaseResult golden_case(int i) {
    const std::string dir = goldens_dir() + "/task7/tiny";
    return match_reference(dir, gpt2::inspect_checkpoint(dir), golden_path("task7", "tiny_reference"), i,
                           i == 0 ? kCoursePrompt : kSecondPrompt);
}

CaseResult model_case() {
    const std::string dir = gpt2::default_model_dir();
    const gpt2::Config cfg = gpt2::inspect_checkpoint(dir);  // checked here before any runner sees it
    CaseResult r;
    for (int i = 0; i < 2; ++i) {
        r = match_reference(dir, cfg, dir + "/reference.safetensors", i, i == 0 ? kCoursePrompt : kSecondPrompt);
        if (r.status != "passed") {
            r.reason = fmt::format("prompt {}: {}", i + 1, r.reason);
            return r;
        }
    }
    double greedy_tps = 0;
    const std::vector<int> greedy_ids = generate(dir, cfg, kCoursePrompt, 50, {}, &greedy_tps);
    const std::string greedy = tokenizer().decode(greedy_ids);
    const std::string sampled = tokenizer().decode(generate(dir, cfg, kCoursePrompt, 50, {10, 0.95f, 1234}, nullptr));
    r.shape = fmt::format("{} ({}); both prompts, 50 greedy tokens each", cfg.describe(), dir);
    r.output = fmt::format("Prompt: {}\n\n```text\n[{}]\n{}{}\n\n"
                           "[top-k 10, temperature 0.95, seed 1234]\n{}{}\n```\n",
                           kCoursePrompt, greedy_label(dir + "/reference.safetensors", greedy_ids), kCoursePrompt, llm::printable(greedy), kCoursePrompt, llm::printable(sampled));
    r.metrics = {{"decode tokens/s (batch 1)", greedy_tps}};
    return r;
}

}  // namespace

std::vector<GradeCase> grade_cases() {
    return {
        {"tiny GPT-2 vs torch: the course's prompt", 1.0, [] { return golden_case(0); }, "golden"},
        {"tiny GPT-2 vs torch: a second prompt", 1.0, [] { return golden_case(1); }, "golden"},
        {"default model vs torch, and its text", 2.0, [] { return model_case(); }, "model"},
    };
}

}  // namespace task7
