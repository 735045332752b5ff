// task6_serve.h — Task 6's second part (6b): serving many requests at once over a paged KV cache. The frozen
// interface.
//
// The serving engine (task6_serve/engine.h, given) runs a trace of requests through a model with grouped-query
// attention (task6_serve/serving_model.h, given). Each step it admits the requests that have arrived while pages
// allow, prefills each newcomer alone, then runs one decode step for every running sequence together (continuous
// batching), and retires the finished ones. Yours: the pages (which sequence holds which) and the attention over them.
//
// The cache: per layer a pool of pages for K and one for V, [num_pages, page_size, H_kv, D] bf16 (Task 5b's layout).
// A page number means the same page in every layer's pools, so one allocator serves all layers.
// Activations at the attention are token-major bf16 (RoPE applied): q, o [T, H_q, D]; k, v [T, H_kv, D];
// H_q = g·H_kv. D ∈ {64, 128}. Work goes on the default stream.
#pragma once
#include <cuda_bf16.h>

#include <vector>

namespace task6 {

struct PagePool {
    int num_pages = 0, page_size = 0;
    std::vector<int> free_pages;  // the pages no sequence holds (the engine starts it as 0 … num_pages − 1)
};

struct PagedSequence {
    std::vector<int> pages;  // pages[p] holds positions p·page_size … (p + 1)·page_size − 1
    int length = 0;          // positions 0 … length − 1 hold K and V (the engine sets it)
};

// task6b.1  Make room for `new_length` positions: take pages from the pool's free list and append them to
//           seq.pages until seq holds ceil(new_length / page_size) pages (a sequence never gives pages back before
//           it finishes). If the pool has too few, return false and change nothing.
bool reserve_pages(PagePool& pool, PagedSequence& seq, int new_length);
// task6b.1  The sequence finished: every page it holds back to the pool; seq.pages empty.
void release_pages(PagePool& pool, PagedSequence& seq);

struct LayerPages {
    __nv_bfloat16* k = nullptr;  // this layer's pools [num_pages, page_size, H_kv, D]
    __nv_bfloat16* v = nullptr;
};

// Device memory the engine lends the prefill: 4·S·H_q·D bf16 elements (room for q, k, v and o heads-first).
struct PrefillScratch {
    __nv_bfloat16* data = nullptr;
    size_t elements = 0;
};

// task6b.2  One request's prompt, S tokens at positions 0 … S − 1: o = causal attention (your 4b kernel; its q, k, v
//           are heads-first [1, H_q, S, D]), and K and V stored into seq's pages (seq.pages cover S positions).
void prefill_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                   const LayerPages& cache, const PagePool& pool, const PagedSequence& seq, int S, int H_q, int H_kv, int D,
                   const PrefillScratch& scratch);

// task6b.3  One decode step for B running sequences, one new token each (row b of q, k, v, o is seqs[b]'s): K and
//           V appended at position seqs[b]->length − 1 (the length counts the new token; its page is reserved),
//           then o = attention over positions 0 … length − 1 (your 5b kernels).
void decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                  const LayerPages& cache, const PagePool& pool, const std::vector<const PagedSequence*>& seqs, int H_q,
                  int H_kv, int D);

}  // namespace task6
