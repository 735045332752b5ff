// engine.h — Task 6b's serving engine (given): a trace of requests served with continuous batching over the
// student's pages and attention (task6_serve.h), on a ServingModel.
//
// Steps. Each step first admits waiting requests in arrival order (first come, first served: the head of the
// queue waits for pages and nobody overtakes it) while the batch has room and the pool can promise every admitted
// request the pages of its whole length, then prefills each newcomer alone (its first token), then runs one decode
// step for every running sequence together (one token each), then retires the finished ones, whose pages go back
// at once. A request arrives at a step of the trace: the trace is replayed the same way every run, so its tokens
// and logits do not depend on timing.
//
// Reservation (how much of the pool an admission promises): per_request promises the pages of the request's own
// final length (prompt + new tokens); max_seq promises max_seq positions to everyone, as a cache reserved per
// sequence at the model's longest length would hold — the same kernels and pages, the memory a contiguous cache
// needs. Pages are taken only as a sequence grows either way; the promise only decides who may start.
//
// Pages move: every `relocate_every` steps (the tests: every few) the engine moves one running sequence to other free
// pages, as a server compacting its pool would, copying its K and V and making the old pages NaN again. A sequence's
// K and V are wherever its pages say at each call, never where they were.
//
// After every call of the student's reserve_pages and release_pages the engine checks the pool: every page held by
// exactly one running sequence or free, each sequence holding just the pages its length needs. A broken rule throws
// std::logic_error saying which (in full when ServeOptions::check_pool_fully, else the counts).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "task6_serve/serving_model.h"

namespace task6 {

struct Request {
    int arrival_step = 0;
    std::vector<int> prompt;
    int new_tokens = 1;  // tokens to generate (the first by the prefill)
};

enum class Reservation { per_request, max_seq };

struct ServeOptions {
    int page_size = 16, num_pages = 0, max_batch = 64;
    Reservation reservation = Reservation::per_request;
    bool keep_logits = true;        // every generated token's logits in the report (the checks need them)
    bool check_pool_fully = true;   // every page after every allocator call (a benchmark's big pool: the counts)
    uint64_t free_list_seed = 6200; // the free list starts shuffled: a page's number says nothing of whose it is
    int relocate_every = 0;         // steps between moves of a running sequence's pages (0: never)
};

struct RequestReport {
    std::vector<int> tokens;     // prompt + generated
    std::vector<float> logits;   // [new_tokens, vocab]: the logits each generated token was chosen from
    int arrival_step = 0, admitted_step = -1, finished_step = -1;
    double ttft_ms = 0;          // its arrival step's start → its first token
    std::vector<double> tbt_ms;  // between its consecutive tokens
};

struct StepReport {
    int running = 0;         // sequences in the decode step
    int prefills = 0;        // requests admitted (and prefilled) this step
    int pages_in_use = 0;    // held by sequences after the step's growth
    int pages_promised = 0;  // what the admissions promised the running sequences (engine.h, Reservation)
    int tokens_in_cache = 0; // positions written in the cache after the step
    double end_ms = 0;       // since the run began
};

struct ServeReport {
    std::vector<RequestReport> requests;
    std::vector<StepReport> steps;
    double total_ms = 0;
    int generated_tokens = 0;
    int peak_running = 0, peak_pages = 0;
};

ServeReport serve(ServingModel& model, const std::vector<Request>& trace, const ServeOptions& options);

// The greedy token of a row of logits: the first of the largest (the engine's choice; the checks compare with it).
inline int greedy_token(const float* logits, int vocab) { return int(std::max_element(logits, logits + vocab) - logits); }

// The pages a request's whole length needs (its prompt and every generated token but the last, which is never fed
// back), and what the admission promises it under `r`.
inline int pages_for(int positions, int page_size) { return (positions + page_size - 1) / page_size; }
int promised_pages(const Request& q, const ServeOptions& o, int max_seq);

}  // namespace task6
