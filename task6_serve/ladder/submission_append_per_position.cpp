// submission_append_per_position.cpp — Task 6's serving part (6b), the ladder's first step as a complete submission
// (the calibration case task6b_calibration_append_per_position, grader/controls.json): the reference, but the prefill
// stores its prompt the way a first attempt does, one paged_append_bf16 call a position (a one-row table: the
// sequence's page that holds it, and the length that puts it in its slot) — S launches and S small host-to-device
// copies of tables where the reference makes one (task6_serve/README.md, "The plan"). Everything else is the
// reference's.
// Build and time it: as a calibration case, tools/controls/check_controls.py --only task6b_calibration_append_per_position
// (on a GPU; tools/gpu/pack_gpu.sh builds it for one).
#define prefill_paged prefill_paged_of_the_reference
#include "task6_serve/reference/paged_serving.cpp"
#undef prefill_paged

namespace task6 {

void prefill_paged(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                   const LayerPages& cache, const PagePool& pool, const PagedSequence& seq, int S, int H_q, int H_kv, int D,
                   const PrefillScratch& scratch) {
    const size_t row = size_t(H_kv) * D;
    for (int i = 0; i < S; ++i) {
        const int page = seq.pages.at(size_t(i / pool.page_size)), length = i % pool.page_size + 1;
        task5::paged_append_bf16(cache.k, cache.v, k + i * row, v + i * row, &page, &length, 1, H_kv, D, pool.page_size,
                                 pool.num_pages, /*pages_per_seq=*/1);
    }
    attend_prompt(q, k, v, o, S, H_q, H_kv, D, scratch);
}

}  // namespace task6
