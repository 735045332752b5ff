// engine.cpp — see engine.h. The scheduling is plain on purpose (first come, first served; admission by promise, so
// nobody ever waits for a page mid-sequence and nothing is preempted): the lesson is where the pages go.
#include "task6_serve/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>

#include "common/cuda/cuda_check.h"

namespace task6 {
namespace {

struct Running {
    int request;
    PagedSequence seq;
    int promised;
    int generated = 0;
};

using Holders = std::vector<std::pair<int, const PagedSequence*>>;  // (request, its sequence) of every page holder

// The pool's rules, checked after each of the student's allocator calls. `focus`: the sequence the call served, which
// must hold the pages of `positions`; `held`: the pages all sequences hold by the engine's count; `holders` (asked
// only for the full check: it walks every page) lists them.
class PoolAudit {
public:
    explicit PoolAudit(const ServeOptions& o) : o_(o) {}

    // `before`: the focus sequence's pages before the call, which must still lead its list (a page keeps its positions).
    void check(const char* call, const PagePool& pool, const std::function<Holders()>& holders, size_t held, int focus_request,
               const PagedSequence& focus, int positions, const std::vector<int>& before = {}) const {
        const auto fail = [&](const std::string& what) {
            throw std::logic_error(fmt::format("after {} for request {} ({} positions): {}", call, focus_request, positions, what));
        };
        if (pool.num_pages != o_.num_pages || pool.page_size != o_.page_size)
            fail(fmt::format("the pool now says {} pages of {} positions; it has {} of {}", pool.num_pages, pool.page_size,
                             o_.num_pages, o_.page_size));
        const int want = pages_for(positions, o_.page_size);
        if (int(focus.pages.size()) != want)
            fail(fmt::format("the sequence holds {} pages; {} positions in pages of {} need {}", focus.pages.size(), positions,
                             o_.page_size, want));
        if (!std::equal(before.begin(), before.end(), focus.pages.begin()))
            fail(fmt::format("the sequence's first {} pages changed: page p holds positions p·page_size … for the sequence's "
                             "whole life (append new pages, never reorder or replace the old)", before.size()));
        if (held + pool.free_pages.size() != size_t(o_.num_pages))
            fail(fmt::format("the running sequences hold {} pages and the free list has {}: together they should be the "
                             "pool's {} (a page lost, or handed out twice)", held, pool.free_pages.size(), o_.num_pages));
        if (!o_.check_pool_fully) return;
        std::vector<int> owner(size_t(o_.num_pages), -2);  // -2 nobody yet, -1 the free list, else a request
        const auto claim = [&](int page, int who) {
            const auto name = [](int w) { return w < 0 ? std::string("the free list") : fmt::format("request {}", w); };
            if (page < 0 || page >= o_.num_pages) fail(fmt::format("page {} (in {}) is outside the pool of {}", page, name(who), o_.num_pages));
            if (owner[size_t(page)] != -2)
                fail(fmt::format("page {} is in {} and in {}", page, name(owner[size_t(page)]), name(who)));
            owner[size_t(page)] = who;
        };
        for (int p : pool.free_pages) claim(p, -1);
        for (const auto& h : holders())
            for (int p : h.second->pages) claim(p, h.first);
    }

private:
    const ServeOptions& o_;
};

void validate(const ServingModel& model, const std::vector<Request>& trace, const ServeOptions& o) {
    const ModelConfig& c = model.config();
    if (o.page_size < 1 || o.page_size > 256 || (o.page_size & (o.page_size - 1)))
        throw std::invalid_argument(fmt::format("page_size {} is not a power of two from 1 to 256", o.page_size));
    if (o.num_pages < 1 || o.max_batch < 1 || o.max_batch > model.max_rows())
        throw std::invalid_argument(fmt::format("num_pages {} and max_batch {} (at most the model's {} rows) must be positive",
                                                o.num_pages, o.max_batch, model.max_rows()));
    for (size_t r = 0; r < trace.size(); ++r) {
        const Request& q = trace[r];
        const int S = int(q.prompt.size());
        if (S < 1 || S > model.max_rows() || q.new_tokens < 1 || S + q.new_tokens - 1 > c.max_seq || q.arrival_step < 0)
            throw std::invalid_argument(fmt::format("request {}: a prompt of {} (1 … {}) and {} new tokens (≥ 1, the total at "
                                                    "most max_seq {}) arriving at step {}",
                                                    r, S, model.max_rows(), q.new_tokens, c.max_seq, q.arrival_step));
        if (promised_pages(q, o, c.max_seq) > o.num_pages)
            throw std::invalid_argument(fmt::format("request {} can never start: it needs {} pages, the pool has {}", r,
                                                    promised_pages(q, o, c.max_seq), o.num_pages));
    }
}

}  // namespace

int promised_pages(const Request& q, const ServeOptions& o, int max_seq) {
    const int positions = o.reservation == Reservation::max_seq ? max_seq : int(q.prompt.size()) + q.new_tokens - 1;
    return pages_for(positions, o.page_size);
}

ServeReport serve(ServingModel& model, const std::vector<Request>& trace, const ServeOptions& o) {
    validate(model, trace, o);
    const int V = model.config().vocab, N = int(trace.size());
    std::vector<int> order(static_cast<size_t>(N));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return trace[size_t(a)].arrival_step < trace[size_t(b)].arrival_step; });

    PagePool pool{o.num_pages, o.page_size, {}};
    for (int p = 0; p < o.num_pages; ++p) pool.free_pages.push_back(p);
    std::shuffle(pool.free_pages.begin(), pool.free_pages.end(), std::mt19937_64(o.free_list_seed));
    const PoolAudit audit(o);
    std::vector<Running> running;
    running.reserve(size_t(o.max_batch));
    size_t held_pages = 0;  // by every sequence, counted as the allocator calls return
    const auto holders = [&](const Running* extra) {
        return [&running, extra] {
            Holders h;
            for (const Running& r : running) h.emplace_back(r.request, &r.seq);
            if (extra) h.emplace_back(extra->request, &extra->seq);
            return h;
        };
    };

    ServeReport rep;
    rep.requests.resize(size_t(N));
    for (int r = 0; r < N; ++r) rep.requests[size_t(r)].tokens = trace[size_t(r)].prompt, rep.requests[size_t(r)].arrival_step = trace[size_t(r)].arrival_step;
    std::vector<double> arrived_ms(size_t(N), -1), last_token_ms(size_t(N), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    const auto now = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
    const auto emit = [&](Running& r, const float* row, double t) {
        RequestReport& q = rep.requests[size_t(r.request)];
        q.tokens.push_back(greedy_token(row, V));
        if (o.keep_logits) q.logits.insert(q.logits.end(), row, row + V);
        if (r.generated == 0)
            q.ttft_ms = t - arrived_ms[size_t(r.request)];
        else
            q.tbt_ms.push_back(t - last_token_ms[size_t(r.request)]);
        last_token_ms[size_t(r.request)] = t;
        ++r.generated, ++rep.generated_tokens;
    };
    // One sequence to other pages (engine.h, "Pages move"), when the pool has as many free.
    const auto relocate = [&](Running& r) {
        const size_t n = r.seq.pages.size();
        if (n == 0 || pool.free_pages.size() < n) return;
        std::vector<int> to(pool.free_pages.end() - long(n), pool.free_pages.end());
        pool.free_pages.resize(pool.free_pages.size() - n);
        model.move_pages(r.seq.pages, to);
        pool.free_pages.insert(pool.free_pages.begin(), r.seq.pages.begin(), r.seq.pages.end());  // reused last
        r.seq.pages = to;
    };
    int promised_total = 0, finished = 0, step = 0;
    size_t next = 0;
    const auto finish = [&](Running& r) {
        held_pages -= r.seq.pages.size();
        release_pages(pool, r.seq);
        audit.check("release_pages", pool, holders(nullptr), held_pages, r.request, r.seq, 0);
        promised_total -= r.promised;
        rep.requests[size_t(r.request)].finished_step = step;
        ++finished;
    };

    while (finished < N) {
        if (o.relocate_every > 0 && step % o.relocate_every == 0 && !running.empty()) relocate(running[size_t(step / o.relocate_every) % running.size()]);
        StepReport s;
        const double start = now();
        for (size_t i = next; i < order.size() && trace[size_t(order[i])].arrival_step <= step; ++i)
            if (arrived_ms[size_t(order[i])] < 0) arrived_ms[size_t(order[i])] = start;
        // Admission: the queue's head, while the batch has room and the pool can keep every promise.
        while (next < order.size() && trace[size_t(order[next])].arrival_step <= step && int(running.size()) < o.max_batch) {
            const int id = order[next];
            const Request& q = trace[size_t(id)];
            const int promise = promised_pages(q, o, model.config().max_seq);
            if (promised_total + promise > o.num_pages) break;
            Running r{id, {}, promise};
            const int S = int(q.prompt.size());
            if (!reserve_pages(pool, r.seq, S))
                throw std::logic_error(fmt::format("reserve_pages returned false for request {}'s prompt of {} with {} pages free "
                                                   "(it needs {})", id, S, pool.free_pages.size(), pages_for(S, o.page_size)));
            held_pages += r.seq.pages.size();
            audit.check("reserve_pages", pool, holders(&r), held_pages, id, r.seq, S);
            r.seq.length = S;
            promised_total += promise, ++next, ++s.prefills;
            rep.requests[size_t(id)].admitted_step = step;
            const std::vector<float> logits = model.prefill(q.prompt, pool, r.seq);
            emit(r, logits.data(), now());
            if (q.new_tokens == 1)
                finish(r);
            else
                running.push_back(std::move(r));
        }
        // One decode step for everyone running: each sequence's newest token goes into its next position.
        if (!running.empty()) {
            std::vector<int> newest;
            std::vector<const PagedSequence*> seqs;
            for (Running& r : running) {
                const int length = r.seq.length + 1;
                const std::vector<int> before = r.seq.pages;
                if (!reserve_pages(pool, r.seq, length))
                    throw std::logic_error(fmt::format("reserve_pages returned false for request {} growing to {} positions "
                                                       "with {} pages free", r.request, length, pool.free_pages.size()));
                held_pages += r.seq.pages.size() - before.size();
                audit.check("reserve_pages", pool, holders(nullptr), held_pages, r.request, r.seq, length, before);
                r.seq.length = length;
                newest.push_back(rep.requests[size_t(r.request)].tokens.back());
                seqs.push_back(&r.seq);
            }
            s.running = int(running.size());
            const std::vector<float> logits = model.decode(newest, pool, seqs);
            const double t = now();
            for (size_t b = 0; b < running.size(); ++b) emit(running[b], logits.data() + b * size_t(V), t);
            for (const Running& r : running) s.pages_in_use += int(r.seq.pages.size()), s.tokens_in_cache += r.seq.length;
            s.pages_promised = promised_total;
            for (auto it = running.begin(); it != running.end();)
                if (it->generated == trace[size_t(it->request)].new_tokens) {
                    Running done = std::move(*it);
                    it = running.erase(it);
                    finish(done);
                } else {
                    ++it;
                }
        }
        s.end_ms = now();
        rep.peak_running = std::max(rep.peak_running, s.running);
        rep.peak_pages = std::max(rep.peak_pages, s.pages_in_use);
        rep.steps.push_back(s);
        ++step;
        if (running.empty() && next < order.size()) step = std::max(step, trace[size_t(order[next])].arrival_step);  // idle
    }
    rep.total_ms = now();
    return rep;
}

}  // namespace task6
