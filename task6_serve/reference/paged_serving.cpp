// Task 6, part 6b — serving many requests at once over a paged KV cache (interface: task6_serve/task6_serve.h).
//
// Build and run:  make task6-serve                  (your skeleton: the part's tests; needs a GPU)
//                 make task6-serve IMPL=reference   (the model solution)
//                 make bench-task6-serve            (a trace served paged and reserved at max_seq: tokens/s, TBT,
//                                                    TTFT, pages in use, the largest batch that fits)
// The engine (task6_serve/engine.cpp, given) decides who runs; this file decides where each sequence's K and V live
// (pages taken as it grows, given back when it finishes) and runs attention over them with your Task 4b and 5b
// kernels. task6_serve/README.md gives the plan.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/llm/gqa_kernels.h"
#include "common/todo.h"
#include "task4_bf16/task4_bf16.h"
#include "task5_paged/task5_paged.h"
#include "task6_serve/task6_serve.h"

namespace task6 {

bool reserve_pages(PagePool& pool, PagedSequence& seq, int new_length) {
#if SOLUTION
    const int held = int(seq.pages.size()), needed = (new_length + pool.page_size - 1) / pool.page_size;
    if (needed <= held) return true;
    if (needed - held > int(pool.free_pages.size())) return false;  // all or nothing
    for (int p = held; p < needed; ++p) {
        seq.pages.push_back(pool.free_pages.back());  // the page freed last: likely still in L2
        pool.free_pages.pop_back();
    }
    return true;
#else
    (void)pool, (void)seq, (void)new_length;
    // TODO: the sequence needs ceil(new_length / page_size) pages. Take the missing ones from pool.free_pages
    // (pop them from the back) onto seq.pages — or, if the pool has too few, return false having taken none.
    ATTNLAB_TODO("task6b.1");
#endif
}

void release_pages(PagePool& pool, PagedSequence& seq) {
#if SOLUTION
    pool.free_pages.insert(pool.free_pages.end(), seq.pages.begin(), seq.pages.end());
    seq.pages.clear();
#else
    (void)pool, (void)seq;
    // TODO: every page of seq back onto pool.free_pages; seq.pages empty.
    ATTNLAB_TODO("task6b.1");
#endif
}

#if SOLUTION
// The prompt's attention with 4b's causal kernel, which takes heads-first tensors with one K/V head per query head:
// transpose q, repeat each K and V head for its g query heads, and transpose o back.
static void attend_prompt(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int S, int H_q,
                          int H_kv, int D, const PrefillScratch& scratch) {
    const size_t n = size_t(S) * H_q * D;
    if (scratch.elements < 4 * n) throw std::invalid_argument("prefill_paged: the scratch is smaller than 4·S·H_q·D");
    __nv_bfloat16 *qh = scratch.data, *kh = qh + n, *vh = kh + n, *oh = vh + n;
    llm::tokens_to_heads_bf16(q, qh, S, H_q, H_q, D);
    llm::tokens_to_heads_bf16(k, kh, S, H_kv, H_q, D);
    llm::tokens_to_heads_bf16(v, vh, S, H_kv, H_q, D);
    task4::flash_attention_forward_bf16(qh, kh, vh, oh, 1, H_q, S, S, D, /*causal=*/true);
    llm::heads_to_tokens_bf16(oh, o, S, H_q, D);
}

#endif
void prefill_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                   const LayerPages& cache, const PagePool& pool, const PagedSequence& seq, int S, int H_q, int H_kv, int D,
                   const PrefillScratch& scratch) {
#if SOLUTION
    // K and V into the pages with 5b's append: prompt position i is a one-page "sequence" of length
    // i mod page_size + 1 whose page is the one holding position i — so the append writes slot i mod page_size of
    // page seq.pages[i / page_size], all S positions in one call.
    std::vector<int> page_of(static_cast<size_t>(S)), length_in_page(static_cast<size_t>(S));
    for (int i = 0; i < S; ++i) {
        page_of[size_t(i)] = seq.pages.at(size_t(i / pool.page_size));
        length_in_page[size_t(i)] = i % pool.page_size + 1;
    }
    task5::paged_append_bf16(cache.k, cache.v, k, v, page_of.data(), length_in_page.data(), S, H_kv, D, pool.page_size,
                             pool.num_pages, /*pages_per_seq=*/1);
    attend_prompt(q, k, v, o, S, H_q, H_kv, D, scratch);
#else
    (void)q, (void)k, (void)v, (void)o, (void)cache, (void)pool, (void)seq, (void)S, (void)H_q, (void)H_kv, (void)D,
        (void)scratch;
    // TODO (1): store the prompt's K and V — position i goes to page seq.pages[i / page_size], slot i mod page_size.
    //           task5::paged_append_bf16 writes one position per row: find tables that make it write all S.
    // TODO (2): o = causal attention with task4::flash_attention_forward_bf16 (heads-first, as many K/V heads as query
    //           heads): llm::tokens_to_heads_bf16 transposes and repeats heads, llm::heads_to_tokens_bf16 turns o back.
    //           The scratch has room for the four heads-first tensors.
    ATTNLAB_TODO("task6b.2");
#endif
}

void decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                  const LayerPages& cache, const PagePool& pool, const std::vector<const PagedSequence*>& seqs, int H_q,
                  int H_kv, int D) {
#if SOLUTION
    // The running batch as 5b's tables: one row of page numbers per sequence, as wide as the longest.
    const int B = int(seqs.size());
    size_t widest = 1;
    for (const PagedSequence* s : seqs) widest = std::max(widest, s->pages.size());
    const int pages_per_seq = int(widest);
    std::vector<int> table(size_t(B) * widest, -1), lengths(static_cast<size_t>(B));  // -1: an entry no position uses
    for (int b = 0; b < B; ++b) {
        std::copy(seqs[size_t(b)]->pages.begin(), seqs[size_t(b)]->pages.end(), table.begin() + long(b) * pages_per_seq);
        lengths[size_t(b)] = seqs[size_t(b)]->length;
    }
    task5::paged_append_bf16(cache.k, cache.v, k, v, table.data(), lengths.data(), B, H_kv, D, pool.page_size,
                             pool.num_pages, pages_per_seq);
    task5::paged_decode_bf16(q, cache.k, cache.v, o, table.data(), lengths.data(), B, H_q, H_kv, D, pool.page_size,
                             pool.num_pages, pages_per_seq);
#else
    (void)q, (void)k, (void)v, (void)o, (void)cache, (void)pool, (void)seqs, (void)H_q, (void)H_kv, (void)D;
    // TODO: build 5b's host tables from the sequences — page_table [B, pages_per_seq] (row b: seqs[b]->pages) and
    // lengths [B] — then task5::paged_append_bf16 (the new K and V) and task5::paged_decode_bf16 (o).
    ATTNLAB_TODO("task6b.3");
#endif
}

}  // namespace task6
