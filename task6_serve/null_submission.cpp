// null_submission.cpp — the serving part done by nothing: part of runner_task6's null runner (task6/null_submission.cpp).
#include "task6_serve/task6_serve.h"

namespace task6 {
bool reserve_pages(PagePool&, PagedSequence&, int) { return false; }
void release_pages(PagePool&, PagedSequence&) {}
void prefill_paged(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, const LayerPages&, const PagePool&,
                   const PagedSequence&, int, int, int, int, const PrefillScratch&) {}
void decode_paged(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, const LayerPages&, const PagePool&,
                  const std::vector<const PagedSequence*>&, int, int, int) {}
}  // namespace task6
