// serve.cpp — Task 6b's operations in runner_task6 (task6/serve.cpp adds them to Task 6's): a whole trace served by
// the engine on the student's pages and attention ("serve_trace"), the student's allocator alone on a script of
// reservations and releases ("allocator_script"), and the graded timing of a server's step ("timed_serve_step"). The
// trusted side (cases_serve.cpp, grader/timed.cpp) judges what comes back.
#include <memory>

#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/serve.h"
#include "task6_serve/engine.h"
#include "task6_serve/task6_serve.h"
#include "task6_serve/timed_inputs.h"

namespace attn::remote {

namespace {

task6::ModelConfig model_of(const nlohmann::json& m) {
    task6::ModelConfig c;
    c.vocab = m.at("vocab"), c.hidden = m.at("hidden"), c.heads = m.at("heads"), c.kv_heads = m.at("kv_heads");
    c.layers = m.at("layers"), c.ffn = m.at("ffn"), c.max_seq = m.at("max_seq"), c.seed = m.at("seed").get<uint64_t>();
    c.batch = 1;
    return c;
}

void serve_trace(Call& c) {
    const nlohmann::json& a = c.args();
    std::vector<task6::Request> trace;
    for (const auto& r : a.at("requests"))
        trace.push_back({r.at("arrival").get<int>(), r.at("prompt").get<std::vector<int>>(), r.at("new_tokens").get<int>()});
    task6::ServeOptions o;
    o.page_size = c.i("page_size"), o.num_pages = c.i("num_pages"), o.max_batch = c.i("max_batch");
    o.reservation = c.s("reservation") == "max_seq" ? task6::Reservation::max_seq : task6::Reservation::per_request;
    o.relocate_every = 3;  // the tests move a running sequence's pages every third step
    auto weights = std::make_shared<task6::Weights>(model_of(a.at("model")));
    task6::ServingModel model(weights, c.i("max_rows"), o.page_size, o.num_pages);
    model.verify_pages(true);
    const task6::ServeReport rep = task6::serve(model, trace, o);
    nlohmann::json requests = nlohmann::json::array(), steps = nlohmann::json::array();
    std::vector<float> logits;
    for (const task6::RequestReport& r : rep.requests) {
        requests.push_back({{"tokens", r.tokens}, {"ttft_ms", r.ttft_ms}, {"tbt_ms", r.tbt_ms}, {"admitted", r.admitted_step},
                            {"finished", r.finished_step}});
        logits.insert(logits.end(), r.logits.begin(), r.logits.end());
    }
    for (const task6::StepReport& s : rep.steps)
        steps.push_back({s.running, s.prefills, s.pages_in_use, s.tokens_in_cache, s.end_ms});
    c.reply.head["requests"] = requests;
    c.reply.head["steps"] = steps;
    c.reply.head["total_ms"] = rep.total_ms;
    c.reply.buffers.push_back(std::move(logits));
}

// ops: [kind, sequence, length] with kind "reserve" (length: the new length) or "release". After each: the call's
// answer (reserve), every sequence's pages and the free list.
void allocator_script(Call& c) {
    task6::PagePool pool{c.i("num_pages"), c.i("page_size"), c.args().at("free").get<std::vector<int>>()};
    std::vector<task6::PagedSequence> seqs(size_t(c.i("sequences")));
    nlohmann::json after = nlohmann::json::array();
    for (const auto& op : c.args().at("ops")) {
        task6::PagedSequence& s = seqs.at(op.at(1).get<size_t>());
        nlohmann::json state;
        if (op.at(0) == "reserve")
            state["answer"] = task6::reserve_pages(pool, s, op.at(2).get<int>());
        else
            task6::release_pages(pool, s);
        nlohmann::json pages = nlohmann::json::array();
        for (const auto& q : seqs) pages.push_back(q.pages);
        state["pages"] = pages;
        state["free"] = pool.free_pages;
        state["pool"] = {pool.num_pages, pool.page_size};
        after.push_back(state);
    }
    c.reply.head["after"] = after;
}

// Graded timing of a server's step (grader/timed.cpp): `calls` steps on fresh pools, pages and activations
// (timed_inputs.h), each a newcomer's prefill_paged then decode_paged over the running batch and the newcomer; both
// outputs poisoned before each call and read as floats after it, two fingerprints a call.
void timed_serve_step(Call& c) {
    namespace timed = task6::timed;
    const timed::Step g{c.i("B"), c.i("H_q"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("min_cached"), c.i("max_cached"),
                        c.i("prompt")};
    const uint64_t seed = c.args().at("seed").get<uint64_t>();
    const size_t np = g.pool_elements(), nqp = g.prompt_q_elements(), nkp = g.prompt_kv_elements();
    const size_t nqs = g.step_q_elements(), nks = g.step_kv_elements();
    DeviceBuffer<uint16_t> k_pool(np), v_pool(np), q_prompt(nqp), k_prompt(nkp), v_prompt(nkp), o_prompt(nqp);
    DeviceBuffer<uint16_t> q_step(nqs), k_step(nks), v_step(nks), o_step(nqs), scratch(4 * nqp);
    DeviceBuffer<float> outputs(nqp + nqs);  // the prefill's o, then the decode step's, as floats
    auto bf16 = [](const DeviceBuffer<uint16_t>& b) { return reinterpret_cast<__nv_bfloat16*>(b.get()); };
    const task6::LayerPages cache{bf16(k_pool), bf16(v_pool)};
    const task6::PagePool pool{g.num_pages(), g.page_size, {}};  // every page held: none free
    std::vector<task6::PagedSequence> seqs(static_cast<size_t>(g.rows()));
    std::vector<const task6::PagedSequence*> batch;
    for (const task6::PagedSequence& s : seqs) batch.push_back(&s);
    task6::PagedSequence& newcomer = seqs.back();
    c.reply.head["timing"] = timed_calls(
        c.i("calls"), seed, {{outputs.get(), nqp}, {outputs.get() + nqp, nqs}},
        [&](int i) {
            const timed::Seeds s = timed::seeds(seed + 4 * uint64_t(i));
            fill_normal_bf16(k_pool.get(), np, s.k_pool), fill_normal_bf16(v_pool.get(), np, s.v_pool);
            fill_normal_bf16(q_prompt.get(), nqp, s.q_prompt), fill_normal_bf16(k_prompt.get(), nkp, s.k_prompt);
            fill_normal_bf16(v_prompt.get(), nkp, s.v_prompt), fill_normal_bf16(q_step.get(), nqs, s.q_step);
            fill_normal_bf16(k_step.get(), nks, s.k_step), fill_normal_bf16(v_step.get(), nks, s.v_step);
            const std::vector<std::vector<int>> pages = timed::pages(g, seed + 4 * uint64_t(i));
            for (int b = 0; b < g.rows(); ++b) seqs[size_t(b)].pages = pages[size_t(b)], seqs[size_t(b)].length = g.length_after(b);
            o_prompt.poison(), o_step.poison();
        },
        [&] {  // the engine's order: the newcomer's prompt (its length then S), then everyone's next token
            newcomer.length = g.prompt;
            task6::prefill_paged(bf16(q_prompt), bf16(k_prompt), bf16(v_prompt), bf16(o_prompt), cache, pool, newcomer, g.prompt,
                                 g.H_q, g.H_kv, g.D, {bf16(scratch), scratch.size()});
            newcomer.length = g.prompt + 1;
            task6::decode_paged(bf16(q_step), bf16(k_step), bf16(v_step), bf16(o_step), cache, pool, batch, g.H_q, g.H_kv, g.D);
        },
        [&] {
            task4::bf16_convert::from_bf16(bf16(o_prompt), outputs.get(), nqp);
            task4::bf16_convert::from_bf16(bf16(o_step), outputs.get() + nqp, nqs);
        });
}

}  // namespace

Handlers task6_serve_handlers() {
    return {{"serve_trace", serve_trace}, {"allocator_script", allocator_script}, {"timed_serve_step", timed_serve_step}};
}

}  // namespace attn::remote
