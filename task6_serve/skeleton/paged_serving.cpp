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
    (void)pool, (void)seq, (void)new_length;
    // TODO: the sequence needs ceil(new_length / page_size) pages. Take the missing ones from pool.free_pages
    // (pop them from the back) onto seq.pages — or, if the pool has too few, return false having taken none.
    ATTNLAB_TODO("task6b.1");
}

void release_pages(PagePool& pool, PagedSequence& seq) {
    (void)pool, (void)seq;
    // TODO: every page of seq back onto pool.free_pages; seq.pages empty.
    ATTNLAB_TODO("task6b.1");
}

void prefill_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                   const LayerPages& cache, const PagePool& pool, const PagedSequence& seq, int S, int H_q, int H_kv, int D,
                   const PrefillScratch& scratch) {
    (void)q, (void)k, (void)v, (void)o, (void)cache, (void)pool, (void)seq, (void)S, (void)H_q, (void)H_kv, (void)D,
        (void)scratch;
    // TODO (1): store the prompt's K and V — position i goes to page seq.pages[i / page_size], slot i mod page_size.
    //           task5::paged_append_bf16 writes one position per row: find tables that make it write all S.
    // TODO (2): o = causal attention with task4::flash_attention_forward_bf16 (heads-first, as many K/V heads as query
    //           heads): llm::tokens_to_heads_bf16 transposes and repeats heads, llm::heads_to_tokens_bf16 turns o back.
    //           The scratch has room for the four heads-first tensors.
    ATTNLAB_TODO("task6b.2");
}

void decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                  const LayerPages& cache, const PagePool& pool, const std::vector<const PagedSequence*>& seqs, int H_q,
                  int H_kv, int D) {
    (void)q, (void)k, (void)v, (void)o, (void)cache, (void)pool, (void)seqs, (void)H_q, (void)H_kv, (void)D;
    // TODO: build 5b's host tables from the sequences — page_table [B, pages_per_seq] (row b: seqs[b]->pages) and
    // lengths [B] — then task5::paged_append_bf16 (the new K and V) and task5::paged_decode_bf16 (o).
    ATTNLAB_TODO("task6b.3");
}

}  // namespace task6
