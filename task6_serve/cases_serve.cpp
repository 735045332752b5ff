// cases_serve.cpp — Task 6b's graded cases on the GPU.
//   allocator  the student's reserve_pages / release_pages alone, on a script of reservations and releases over a
//              pool whose free list is shuffled: each answer, each sequence's pages and the free list checked here
//   serve      seeded traces of requests (prompts 1 … 1500 tokens, 1 … 130 new tokens, arrivals spread over the
//              first steps) served by the engine in the runner on the student's pages and attention; GQA (g = 2, 4,
//              8), MQA and MHA; pages of 1, 16, 64, 256 positions; pools tight enough that requests wait for pages
//              and reuse pages others finished with
//   fresh      two more traces and models drawn from GRADER_SEED
// Every request is checked on its own: the oracle (serving_model.h: no cache, no student kernel) runs the request's
// tokens alone, and each generated token's logits must match within the tolerance and its greedy choice must be the
// oracle's (ties within the tolerance aside) — what continuous batching and paging must never change.
#include "task6_serve/cases_serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>

#include "common/check.h"
#include "common/llm/greedy_check.h"
#include "common/remote/runner.h"
#include "common/seed.h"
#include "task6_serve/engine.h"
#include "task6_serve/serving_model.h"

namespace task6 {
namespace {

using namespace attn;


struct TraceSpec {
    ModelConfig model;
    int requests = 8, max_prompt = 200, max_new = 24, arrival_steps = 6;
    int page_size = 16, num_pages = 0, max_batch = 8;
    uint64_t seed = 1;
    std::vector<std::pair<int, int>> fixed;  // requests of exactly (prompt, new tokens), arriving first
    bool expect_waiting = false;             // the pool is tight enough that some request must wait for pages
};

std::vector<Request> make_trace(const TraceSpec& s) {
    std::mt19937_64 g(s.seed);
    std::vector<Request> trace;
    const auto tokens = [&](int n) {
        std::vector<int> t(static_cast<size_t>(n));
        for (int& x : t) x = int(g() % uint64_t(s.model.vocab));
        return t;
    };
    for (const auto& [prompt, fresh] : s.fixed) trace.push_back({0, tokens(prompt), fresh});
    while (int(trace.size()) < s.requests) {
        const int S = uniform_int(g, 1, s.max_prompt), n = uniform_int(g, 1, s.max_new), at = uniform_int(g, 0, s.arrival_steps);
        trace.push_back({at, tokens(S), n});
    }
    return trace;
}

nlohmann::json model_json(const ModelConfig& c) {
    return {{"vocab", c.vocab}, {"hidden", c.hidden}, {"heads", c.heads}, {"kv_heads", c.kv_head_count()}, {"layers", c.layers},
            {"ffn", c.ffn}, {"max_seq", c.max_seq}, {"seed", c.seed}};
}

std::string describe(const TraceSpec& s, const std::vector<Request>& trace) {
    int longest = 0, total_new = 0;
    for (const Request& q : trace) longest = std::max(longest, int(q.prompt.size())), total_new += q.new_tokens;
    return fmt::format("{}; {} requests (prompts up to {}, {} new tokens in all), pages of {} × {}, batch ≤ {}",
                       s.model.describe(), trace.size(), longest, total_new, s.page_size, s.num_pages, s.max_batch);
}

// The oracle runs each request alone and must agree with what the engine served it.
bool requests_agree(CaseResult& r, const TraceSpec& s, const std::vector<Request>& trace, const remote::Message& reply) {
    const int V = s.model.vocab;
    const auto& served = reply.head.at("requests");
    if (served.size() != trace.size()) {
        r.reason = fmt::format("the engine reported {} requests of {}", served.size(), trace.size());
        return false;
    }
    int longest = 1;
    for (const Request& q : trace) longest = std::max(longest, int(q.prompt.size()) + q.new_tokens - 1);
    ServingModel oracle(std::make_shared<Weights>(s.model), longest);
    size_t offset = 0;  // into the logits, request after request
    for (size_t i = 0; i < trace.size(); ++i) {
        const Request& q = trace[i];
        const int S = int(q.prompt.size());
        const std::vector<int> tokens = served[i].at("tokens").get<std::vector<int>>();
        if (int(tokens.size()) != S + q.new_tokens) {
            r.reason = fmt::format("request {} came back with {} tokens; its prompt of {} and {} new ones expected", i,
                                   tokens.size(), S, q.new_tokens);
            return false;
        }
        if (!std::equal(q.prompt.begin(), q.prompt.end(), tokens.begin())) {
            r.reason = fmt::format("request {} came back with a prompt other than the one it was sent", i);
            return false;
        }
        const Tensor want = oracle.all_logits(std::vector<int>(tokens.begin(), tokens.end() - 1));
        for (int j = 0; j < q.new_tokens; ++j, offset += size_t(V)) {
            Tensor got({1, V}), row({1, V});
            std::copy_n(reply.buffers[0].begin() + long(offset), V, got.ptr());
            std::copy_n(want.ptr() + size_t(S - 1 + j) * V, V, row.ptr());
            const std::string step = fmt::format("request {} (prompt {}, admitted at step {}), its token {} at position {}", i, S,
                                                 served[i].at("admitted").get<int>(), j + 1, S + j);
            if (!llm::check_step(r, step, got, row, {tokens[size_t(S + j)]}, {greedy_token(row.ptr(), V)}, kServingTolerance)) {
                r.reason += j == 0 ? " — its first token comes from the prefill's attention (prefill_paged)"
                                   : " — a decode step (decode_paged), over the K and V the prefill and the earlier steps stored";
                return false;
            }
        }
    }
    return true;
}

CaseResult trace_case(const TraceSpec& s) {
    const std::vector<Request> trace = make_trace(s);
    CaseResult r;
    r.shape = describe(s, trace);
    int max_rows = s.max_batch, total_new = 0;
    nlohmann::json requests = nlohmann::json::array();
    for (const Request& q : trace) {
        max_rows = std::max(max_rows, int(q.prompt.size()));
        total_new += q.new_tokens;
        requests.push_back({{"arrival", q.arrival_step}, {"prompt", q.prompt}, {"new_tokens", q.new_tokens}});
    }
    remote::Message req, reply;
    req.head = {{"op", "serve_trace"},
                {"args", {{"model", model_json(s.model)}, {"max_rows", max_rows}, {"page_size", s.page_size},
                          {"num_pages", s.num_pages}, {"max_batch", s.max_batch}, {"reservation", "per_request"},
                          {"requests", requests}}}};
    r.ms = wall_ms([&] { reply = remote::request(req, {size_t(total_new) * s.model.vocab}); });
    if (!requests_agree(r, s, trace, reply)) return r;
    int peak_running = 0, peak_pages = 0, waited = 0;
    for (const auto& st : reply.head.at("steps")) peak_running = std::max(peak_running, st[0].get<int>()), peak_pages = std::max(peak_pages, st[2].get<int>());
    for (size_t i = 0; i < trace.size(); ++i) waited += reply.head.at("requests")[i].at("admitted").get<int>() > trace[i].arrival_step;
    if (s.expect_waiting && waited == 0) {  // the case exists to make requests wait for pages and reuse them
        r.reason = "no request waited for pages: the engine's report says every one started when it arrived";
        return r;
    }
    r.note = fmt::format("{} steps, up to {} sequences decoding together, up to {} of {} pages in use, {} requests waited for pages",
                         reply.head.at("steps").size(), peak_running, peak_pages, s.num_pages, waited);
    r.metrics = {{"peak batch", peak_running}, {"peak pages", peak_pages}};
    r.status = "passed";
    return r;
}

// ---- the allocator alone -------------------------------------------------------------------------------------------

struct Op {
    bool reserve;
    int seq, length;
};

struct Script {
    int num_pages, page_size, sequences;
    std::vector<Op> ops;
    uint64_t shuffle_seed;
};

// 15 calls over 10 pages of 16: growth within a page, across pages, a reservation the pool cannot meet (twice), a
// release that makes room for it, a sequence grown to the whole pool and one position past it.
Script fixed_script() {
    return {10, 16, 3,
            {{true, 0, 1}, {true, 0, 16}, {true, 0, 17}, {true, 1, 100}, {true, 2, 33}, {true, 2, 16}, {true, 0, 33}, {false, 1, 0},
             {true, 0, 33}, {true, 2, 80}, {false, 0, 0}, {false, 2, 0}, {true, 1, 160}, {true, 1, 161}, {false, 1, 0}},
            6200};
}

// A script drawn from GRADER_SEED: a pool of 6 … 24 pages, 3 … 6 sequences, 60 calls growing a sequence by up to three
// pages' worth or releasing it, so that some reservations cannot be met.
Script fresh_script() {
    auto g = rng_for("task6b.allocator");
    Script sc{uniform_int(g, 6, 24), pick(g, std::vector<int>{1, 4, 16, 64}), uniform_int(g, 3, 6), {}, g()};
    std::vector<int> length(size_t(sc.sequences), 0);
    for (int i = 0; i < 60; ++i) {
        const int q = uniform_int(g, 0, sc.sequences - 1);
        if (length[size_t(q)] > 0 && uniform_int(g, 0, 4) == 0) {
            sc.ops.push_back({false, q, 0}), length[size_t(q)] = 0;
        } else {
            const int grown = length[size_t(q)] + uniform_int(g, 0, 3 * sc.page_size);
            sc.ops.push_back({true, q, grown});
            length[size_t(q)] = grown;  // the trusted side's model below decides whether it fits; lengths only grow
        }
    }
    return sc;
}

CaseResult allocator_case(const Script& sc) {
    const int num_pages = sc.num_pages, page_size = sc.page_size, sequences = sc.sequences;
    const std::vector<Op>& ops = sc.ops;
    std::vector<int> free(static_cast<size_t>(num_pages));
    std::iota(free.begin(), free.end(), 0);
    std::shuffle(free.begin(), free.end(), std::mt19937_64(sc.shuffle_seed));
    CaseResult r;
    r.shape = fmt::format("a pool of {} pages of {} positions (free list shuffled), {} sequences, {} calls", num_pages, page_size,
                          sequences, ops.size());
    nlohmann::json script = nlohmann::json::array();
    for (const Op& o : ops) script.push_back({o.reserve ? "reserve" : "release", o.seq, o.length});
    remote::Message req, reply;
    req.head = {{"op", "allocator_script"},
                {"args", {{"num_pages", num_pages}, {"page_size", page_size}, {"sequences", sequences}, {"free", free}, {"ops", script}}}};
    reply = remote::request(req, {});
    const auto& after = reply.head.at("after");
    if (after.size() != ops.size()) {
        r.reason = "the allocator script came back short";
        return r;
    }
    std::vector<std::vector<int>> held(static_cast<size_t>(sequences));  // what each sequence held before the call
    for (size_t i = 0; i < ops.size(); ++i) {
        const Op& o = ops[i];
        const std::string call = o.reserve ? fmt::format("call {}: reserve_pages(sequence {}, {} positions)", i + 1, o.seq, o.length)
                                           : fmt::format("call {}: release_pages(sequence {})", i + 1, o.seq);
        const auto pages = after[i].at("pages").get<std::vector<std::vector<int>>>();
        const auto free_now = after[i].at("free").get<std::vector<int>>();
        if (after[i].at("pool") != nlohmann::json{num_pages, page_size}) {
            r.reason = call + " changed the pool's num_pages or page_size";
            return r;
        }
        int in_use = 0;
        for (const auto& p : held) in_use += int(p.size());
        const int needed = pages_for(o.length, page_size), have = int(held[size_t(o.seq)].size());
        const bool fits = needed - have <= num_pages - in_use;
        std::vector<int> want_count(static_cast<size_t>(sequences));
        for (int q = 0; q < sequences; ++q) want_count[size_t(q)] = int(held[size_t(q)].size());
        if (o.reserve) {
            const bool answer = after[i].at("answer").get<bool>();
            if (answer != fits) {
                r.reason = fmt::format("{} returned {}: {} pages held, {} needed, {} free", call, answer, have, needed,
                                       num_pages - in_use);
                return r;
            }
            if (fits) want_count[size_t(o.seq)] = std::max(have, needed);
        } else {
            want_count[size_t(o.seq)] = 0;
        }
        std::vector<int> seen(static_cast<size_t>(num_pages), 0);
        for (int q = 0; q < sequences; ++q) {
            const auto& p = pages[size_t(q)];
            if (int(p.size()) != want_count[size_t(q)]) {
                r.reason = fmt::format("after {} sequence {} holds {} pages; it should hold {}{}", call, q, p.size(),
                                       want_count[size_t(q)], o.reserve && !fits ? " (a reservation that fails takes nothing)" : "");
                return r;
            }
            if (!std::equal(held[size_t(q)].begin(), held[size_t(q)].begin() + long(std::min(p.size(), held[size_t(q)].size())), p.begin())) {
                r.reason = fmt::format("after {} sequence {}'s earlier pages moved: its page p must keep positions p·page_size …", call, q);
                return r;
            }
            for (int page : p) {
                if (page < 0 || page >= num_pages || seen[size_t(page)]++) {
                    r.reason = fmt::format("after {} page {} is outside the pool or held twice", call, page);
                    return r;
                }
            }
        }
        for (int page : free_now)
            if (page < 0 || page >= num_pages || seen[size_t(page)]++) {
                r.reason = fmt::format("after {} page {} is in the free list and held, or in it twice", call, page);
                return r;
            }
        if (std::count(seen.begin(), seen.end(), 1) != num_pages) {
            r.reason = fmt::format("after {} {} of the pool's {} pages are neither free nor held (lost)", call,
                                   std::count(seen.begin(), seen.end(), 0), num_pages);
            return r;
        }
        held = pages;
    }
    r.status = "passed";
    return r;
}

// ---- the cases ---------------------------------------------------------------------------------------------------

ModelConfig model(int vocab, int heads, int kv_heads, int D, int layers, uint64_t seed, int max_seq) {
    ModelConfig c;
    c.vocab = vocab, c.heads = heads, c.kv_heads = kv_heads, c.hidden = heads * D, c.ffn = 2 * c.hidden, c.layers = layers;
    c.seed = seed, c.max_seq = max_seq, c.batch = 1;
    return c;
}

TraceSpec fresh_spec(int draw) {
    auto g = rng_for("task6b.fresh." + std::to_string(draw));
    const int D = pick(g, std::vector<int>{64, 128}), kv = pick(g, std::vector<int>{1, 2, 4}), group = pick(g, std::vector<int>{1, 2, 4, 8});
    TraceSpec s;
    s.model = model(uniform_int(g, 200, 3000), kv * group, kv, D, uniform_int(g, 1, 3), g() % 1000000, 512);
    // Never a draw that skips a feature: decode steps (8 new tokens or more), batches (2 or more), prompts past a page.
    s.requests = uniform_int(g, 4, 14), s.max_prompt = uniform_int(g, 16, 300), s.max_new = uniform_int(g, 8, 40);
    s.arrival_steps = uniform_int(g, 0, 10), s.page_size = pick(g, std::vector<int>{1, 8, 16, 32, 64, 128, 256});
    s.max_batch = uniform_int(g, 2, 12), s.seed = g();
    const int biggest = pages_for(s.max_prompt + s.max_new, s.page_size);
    s.num_pages = biggest + uniform_int(g, 0, 4 * biggest);  // from one request at a time to room for several
    return s;
}

}  // namespace

std::vector<GradeCase> serve_grade_cases() {
    std::vector<GradeCase> cases;
    cases.push_back({"allocator: reserve and release on a shuffled free list", 1.0, [] { return allocator_case(fixed_script()); },
                     "allocator"});
    cases.push_back({"allocator: a script drawn from GRADER_SEED", 0.5,
                     [] {
                         CaseResult r = allocator_case(fresh_script());
                         r.shape = fmt::format("seed {}: {}", grader_seed(), r.shape);
                         return r;
                     },
                     "allocator"});
    const auto add = [&](const std::string& name, double w, const std::string& suite, TraceSpec s) {
        cases.push_back({name, w, [s] { return trace_case(s); }, suite});
    };
    {
        TraceSpec s;  // MHA, roomy pool: continuous batching alone
        s.model = model(512, 4, 4, 64, 2, 6301, 512), s.requests = 10, s.page_size = 16, s.num_pages = 200, s.seed = 11;
        add("MHA D=64, pages of 16, roomy pool", 1.0, "serve", s);
    }
    {
        TraceSpec s;  // GQA g=4, a pool of 12 pages of 64: requests wait, then reuse pages others released
        s.model = model(1000, 8, 2, 128, 2, 6302, 512), s.requests = 12, s.max_prompt = 250, s.max_new = 40;
        s.page_size = 64, s.num_pages = 12, s.seed = 12, s.expect_waiting = true;
        add("GQA 8 over 2, D=128, pages of 64, a tight pool", 1.0, "serve", s);
    }
    {
        TraceSpec s;  // MQA, one position a page: a page table as long as the sequence
        s.model = model(700, 8, 1, 64, 2, 6303, 512), s.requests = 8, s.max_prompt = 130, s.max_new = 20;
        s.page_size = 1, s.num_pages = 700, s.max_batch = 5, s.seed = 13;
        add("MQA 8 over 1, D=64, pages of 1 position", 1.0, "serve", s);
    }
    {
        TraceSpec s;  // a long prompt (split-KV in decode) among short ones, g = 8, big pages
        s.model = model(900, 16, 2, 128, 2, 6304, 1700), s.requests = 7, s.max_prompt = 60, s.max_new = 12;
        s.fixed = {{1500, 130}, {1, 1}, {129, 3}};
        s.page_size = 256, s.num_pages = 20, s.max_batch = 6, s.seed = 14;
        add("GQA 16 over 2, D=128, pages of 256, a 1500-token prompt among short ones", 1.0, "serve", s);
    }
    for (int draw = 0; draw < 2; ++draw)
        cases.push_back({fmt::format("fresh trace #{}", draw + 1), 1.0,
                         [draw] {
                             CaseResult r = trace_case(fresh_spec(draw));
                             r.shape = fmt::format("seed {}: {}", grader_seed(), r.shape);
                             return r;
                         },
                         "fresh"});
    return cases;
}

}  // namespace task6
