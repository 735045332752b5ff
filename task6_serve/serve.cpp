// serve.cpp — Task 6b's operations in runner_task6 (task6/serve.cpp adds them to Task 6's): a whole trace served by
// the engine on the student's pages and attention ("serve_trace"), and the student's allocator alone on a script of
// reservations and releases ("allocator_script"). The trusted side (cases_serve.cpp) judges what comes back.
#include <memory>

#include "common/remote/serve.h"
#include "task6_serve/engine.h"
#include "task6_serve/task6_serve.h"

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

}  // namespace

Handlers task6_serve_handlers() { return {{"serve_trace", serve_trace}, {"allocator_script", allocator_script}}; }

}  // namespace attn::remote
