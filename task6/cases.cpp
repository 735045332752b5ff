// cases.cpp — Task 6's graded cases on the GPU: the model of task6/model.h run with the student's
// attention_forward (prefill, then one token per step with the KV cache), checked three ways.
//   golden  small models whose weights tools/goldens/make_goldens.py rebuilds from the same seeds: every
//           step's logits against torch (float64), the run following torch's tokens
//   oracle  every step's logits and greedy token against a no-cache run that recomputes the whole
//           sequence with the harness's own attention (fresh weights from GRADER_SEED too)
//   course  the course's size (hidden 4096, 32 heads, 24 layers, batch 4, prompt 1024, 100 new
//           tokens): first steps checked against the oracle, then TTFT and TBT timed with events
//           (the timed run's last step checked against the oracle too), and the no-cache baseline (the student's Task-4 kernel over the whole sequence)
// A greedy token may differ from the reference's only where the reference's two logits are
// within the tolerance of each other (a tie in float32); the run then follows the reference.
#include "task6/cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "common/check.h"
#include "common/cuda/device.h"
#include "common/cuda/gpu_case.h"
#include "common/golden.h"
#include "common/llm/greedy_check.h"
#include "common/llm/remote_model.h"
#include "common/cuda/memory_watch.h"
#include "common/remote/runner.h"
#include "common/seed.h"
#include "task6/model.h"
#include "task6/timing.h"

namespace task6 {
namespace {

using namespace attn;
const Tolerance kSmallTol{1e-3, 1e-3}, kCourseTol{3e-3, 3e-3};

using llm::check_step;
using llm::column;

template <class Model>
std::vector<int> newest(const Model& m, int B) {
    return column(m.tokens(), B, m.length(), m.length() - 1);
}

// The student's model, in the runner: the same seeded weights, their attention.
llm::RemoteModel student_model(const ModelConfig& c) {
    return llm::RemoteModel({{"vocab", c.vocab}, {"hidden", c.hidden}, {"heads", c.heads}, {"layers", c.layers}, {"ffn", c.ffn},
                             {"batch", c.batch}, {"max_seq", c.max_seq}, {"seed", c.seed}, {"mode", "kv_cache"}},
                            c.batch, c.vocab);
}

std::vector<int> random_prompt(uint64_t seed, int B, int S, int vocab) {
    std::mt19937_64 g(seed);
    std::vector<int> p(size_t(B) * S);
    for (int& t : p) t = int(g() % uint64_t(vocab));
    return p;
}

ModelConfig config_from(const SafetensorsFile& f) {
    ModelConfig c;
    c.vocab = golden_int(f, "vocab"), c.hidden = golden_int(f, "hidden"), c.heads = golden_int(f, "heads");
    c.layers = golden_int(f, "layers"), c.ffn = golden_int(f, "ffn"), c.batch = golden_int(f, "B");
    c.max_seq = golden_int(f, "S") + golden_int(f, "steps");
    c.seed = uint64_t(golden_int(f, "model_seed"));
    return c;
}

// Every step against torch: the prefill's logits, then `steps` decode steps following torch's tokens.
CaseResult golden_case(const std::string& name) {
    SafetensorsFile f = open_golden("task6", name);
    const ModelConfig cfg = config_from(f);
    const int B = cfg.batch, S = golden_int(f, "S"), steps = golden_int(f, "steps");
    const Tolerance tol = golden_tolerance(f);
    const std::vector<int> prompt = llm::ids_of(f.load_f32("prompt", {B, S}));
    const std::vector<int> want_tokens = llm::ids_of(f.load_f32("tokens", {B, steps + 1}));
    const Tensor want_logits = f.load_f32("logits", {steps + 1, B, cfg.vocab});
    CaseResult r;
    r.shape = fmt::format("{}; prompt {} + {} steps", cfg.describe(), S, steps);
    llm::RemoteModel m = student_model(cfg);
    r.ms = wall_ms([&] { llm::follow_reference(r, m, prompt, S, steps, want_tokens, want_logits, tol); });
    return r;
}

// The KV-cache run (in the runner) against the no-cache oracle (here) over the same weights,
// following the cache's tokens.
void check_against_oracle(CaseResult& r, llm::RemoteModel& mine, DecoderModel& oracle, const std::vector<int>& prompt, int S,
                          int steps, Tolerance tol) {
    const int B = oracle.config().batch;
    for (int step = 0; step <= steps; ++step) {
        if (step == 0) {
            mine.prefill(prompt, S), oracle.prefill(prompt, S);
        } else {
            oracle.force_newest(column(mine.tokens(), B, mine.length(), oracle.length() - 1));
            mine.decode(), oracle.decode();
        }
        if (!check_step(r, llm::step_name(step, S), mine.logits_host(),
                        oracle.logits_host(), newest(mine, B), newest(oracle, B), tol))
            return;
    }
    r.status = "passed";
}

CaseResult oracle_case(const ModelConfig& cfg, int S, int steps, const std::string& label) {
    CaseResult r;
    r.shape = fmt::format("{}{}; prompt {} + {} steps", label, cfg.describe(), S, steps);
    llm::RemoteModel mine = student_model(cfg);
    DecoderModel oracle(std::make_shared<Weights>(cfg), Attention::oracle);
    const std::vector<int> prompt = random_prompt(cfg.seed + 17, cfg.batch, S, cfg.vocab);
    r.ms = wall_ms([&] { check_against_oracle(r, mine, oracle, prompt, S, steps, kSmallTol); });
    return r;
}

CaseResult fresh_case(int draw) {
    auto g = rng_for("task6.fresh." + std::to_string(draw));
    ModelConfig c;
    const int D = pick(g, std::vector<int>{32, 64, 128});
    c.heads = uniform_int(g, 1, 4), c.hidden = c.heads * D, c.ffn = 4 * c.hidden, c.layers = uniform_int(g, 1, 3);
    c.vocab = uniform_int(g, 100, 3000), c.batch = uniform_int(g, 1, 3), c.seed = g() % 1000000;
    const int S = uniform_int(g, 1, 150), steps = uniform_int(g, 5, 20);
    c.max_seq = S + steps;
    return oracle_case(c, S, steps, fmt::format("seed {}: ", grader_seed()));
}

// The timed generation is held to the checked steps' tolerance: given the tokens the timed run
// chose, the oracle recomputes its last step (one pass over the whole sequence, no cache) and the
// run's final logits and greedy token must agree. A run that is cheaper only when timed (lower
// precision, skipped layers) drifts there.
bool timed_run_agrees(CaseResult& r, const ModelConfig& cfg, const std::vector<int>& prompt, int S, int steps,
                      const remote::Message& reply) {
    const int B = cfg.batch, length = S + steps + 1;
    const std::vector<int> tokens = reply.head.value("tokens", std::vector<int>{});
    if (reply.head.value("length", 0) != length || tokens.size() != size_t(B) * length) {
        r.reason = fmt::format("the timed run reported {} tokens per sequence, not the prompt's {} + {} steps + the newest",
                               reply.head.value("length", 0), S, steps);
        return false;
    }
    std::vector<int> processed;  // every token but the newest: the inputs of the run's last step
    for (int b = 0; b < B; ++b) {
        const auto row = tokens.begin() + long(b) * length;
        if (!std::equal(row, row + S, prompt.begin() + long(b) * S)) {
            r.reason = fmt::format("the timed run's sequence {} does not start with the prompt it was given", b);
            return false;
        }
        processed.insert(processed.end(), row, row + length - 1);
    }
    DecoderModel oracle(std::make_shared<Weights>(cfg), Attention::oracle);
    oracle.prefill(processed, length - 1);
    Tensor got({B, cfg.vocab});
    got.data = reply.buffers[0];
    return check_step(r, fmt::format("the timed run's last step (position {})", length - 2), got, oracle.logits_host(),
                      column(tokens, B, length, length - 1), newest(oracle, B), kCourseTol);
}

// The course's run. Layers are cut to what the GPU's memory holds (said in the shape) so a
// smaller GPU still runs it: the weights live twice, in the runner and here (the oracle).
// TTFT and TBT are timed with events in the runner and must agree with this side's clock.
CaseResult course_case() {
    const int S = 1024, steps = 100, checked_steps = 3;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const ModelConfig full = ModelConfig::course();
    std::string cut;
    const ModelConfig cfg = fit_layers(
        full, full.run_bytes(Attention::kv_cache) + full.run_bytes(Attention::oracle) + full.weight_bytes(), free_b, cut);
    CaseResult r;
    r.shape = fmt::format("{}; prompt {} + {} steps{}", cfg.describe(), S, steps, cut.empty() ? "" : " (" + cut + ")");
    const std::vector<int> prompt = random_prompt(cfg.seed + 17, cfg.batch, S, cfg.vocab);
    llm::RemoteModel mine = student_model(cfg);
    {  // correctness first: the prefill and the first steps against the oracle
        DecoderModel oracle(std::make_shared<Weights>(cfg), Attention::oracle);
        check_against_oracle(r, mine, oracle, prompt, S, checked_steps, kCourseTol);
        if (r.status != "passed") return r;
        r.status = "failed";
    }
    remote::Message req, reply;
    req.head = {{"op", "model_time"}, {"args", {{"prompt", prompt}, {"S", S}, {"steps", steps}}}};
    double wall = 0, grew = 0;
    {
        size_t f0 = 0, f1 = 0;
        CUDA_CHECK(cudaMemGetInfo(&f0, &total_b));
        wall = wall_ms([&] { reply = remote::request(req, {size_t(cfg.batch) * cfg.vocab}); });
        CUDA_CHECK(cudaMemGetInfo(&f1, &total_b));
        grew = double(f0) - double(f1);
    }
    if (grew > 1e6) {
        r.reason = fmt::format("device memory fell by {:.1f} MB during generation: allocate once, outside the loop", grew / 1e6);
        return r;
    }
    for (float x : reply.buffers[0])
        if (!std::isfinite(x)) {
            r.reason = fmt::format("the logits of step {} are not finite", steps);
            return r;
        }
    if (!timed_run_agrees(r, cfg, prompt, S, steps, reply)) return r;
    GenerationTiming t;
    t.ttft_ms = reply.head.at("ttft_ms").get<double>();
    t.tbt_ms = reply.head.at("tbt_ms").get<std::vector<double>>();
    if (!timing_agrees(r, "TTFT + TBT", t.ttft_ms + t.tbt_total(), wall, 0.5)) return r;
    // The no-cache baseline: every step recomputes the whole sequence (the student's Task-4 kernel).
    remote::Message base_req, base;
    base_req.head = {{"op", "model_no_cache"},
                     {"args", {{"vocab", cfg.vocab}, {"hidden", cfg.hidden}, {"heads", cfg.heads}, {"layers", cfg.layers},
                               {"ffn", cfg.ffn}, {"batch", cfg.batch}, {"max_seq", cfg.max_seq}, {"seed", cfg.seed},
                               {"prompt", prompt}, {"S", S}, {"steps", checked_steps}}}};
    const double base_wall = wall_ms([&] { base = remote::request(base_req, {}); });
    const double no_cache_ms = base.head.at("step_ms").get<double>();
    if (!timing_agrees(r, "no-cache step", no_cache_ms * checked_steps, base_wall)) return r;
    r.ms = t.ttft_ms + t.tbt_total();
    r.metrics = {{"TTFT ms", t.ttft_ms},
                 {"TBT median ms", t.tbt_median()},
                 {"TBT p90 ms", t.tbt_p90()},
                 {"decode tokens/s", cfg.batch * 1000.0 / t.tbt_median()},
                 {"KV cache GB", cfg.kv_cache_bytes() / 1e9},
                 {"no-cache step ms", no_cache_ms},
                 {"KV-cache speedup per step", no_cache_ms / t.tbt_median()}};
    r.status = "passed";
    return r;
}

// attention_forward must refuse what is neither a prefill nor a decode step, naming the numbers.
CaseResult rejects(int S, int pos, int max_seq) {
    const int B = 1, H = 2, D = 64;
    CaseResult r;
    r.shape = fmt::format("S={} pos={} max_seq={}", S, pos, max_seq);
    DeviceBuffer<float> q(size_t(B) * H * S * D), k(q.size()), v(q.size()), o(q.size()), kc(size_t(B) * H * max_seq * D),
        vc(kc.size());
    expect_throw<std::logic_error>(  // std::invalid_argument, or Task 5's std::out_of_range
        r,
        [&] {
            attention_forward(q.get(), k.get(), v.get(), o.get(), {kc.get(), vc.get(), max_seq}, B, H, S, D, pos);
            sync_default_stream();
        },
        {std::to_string(pos), std::to_string(max_seq)},
        fmt::format("attention_forward accepted S={} at pos={} with max_seq={} (must throw std::invalid_argument)", S, pos,
                    max_seq));
    return r;
}

}  // namespace

std::vector<GradeCase> grade_cases() {
    std::vector<GradeCase> cases;
    for (const char* g : {"prompt37_d64", "prompt1_d128", "prompt129_d32"})
        cases.push_back({fmt::format("torch golden: {}", g), 1.0, [g] { return golden_case(g); }, "golden"});
    {
        ModelConfig c;  // head_dim 128, a prompt no tile divides, 40 steps
        c.vocab = 2048, c.hidden = 512, c.heads = 4, c.layers = 3, c.ffn = 2048, c.batch = 3, c.max_seq = 200 + 40, c.seed = 6101;
        cases.push_back({"KV cache vs no-cache oracle", 2.0, [c] { return oracle_case(c, 200, 40, ""); }, "oracle"});
    }
    cases.push_back({"course: 24 layers × 4096, prompt 1024, 100 tokens", 2.0, [] { return course_case(); }, "course"});
    cases.push_back({"rejects a chunked prefill (S=3 at pos=5)", 0.5, [] { return rejects(3, 5, 16); }, "errors"});
    cases.push_back({"rejects a step past max_seq (pos=16)", 0.5, [] { return rejects(1, 16, 16); }, "errors"});
    for (int draw = 0; draw < 2; ++draw)
        cases.push_back({fmt::format("fresh weights #{}", draw + 1), 1.0, [draw] { return fresh_case(draw); }, "fresh"});
    return cases;
}

}  // namespace task6
