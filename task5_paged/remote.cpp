// remote.cpp — the paged part's interface on the trusted side: the kernels run in runner_task5 (runner.h). bf16
// tensors travel as float words of two bf16 each (an odd count rounds up); the host tables travel as host buffers of
// int32 in float words (the same four bytes); the pools are inout, so that what the append wrote, and nothing else,
// is checked here.
#include "common/remote/proxy.h"
#include "task5_paged/task5_paged.h"

namespace task5 {

using namespace attn::remote;

namespace {
size_t bf16_words(size_t n) { return (n + 1) / 2; }
const float* words(const void* p) { return static_cast<const float*>(p); }
nlohmann::json geometry(int B, int H_q, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
    return {{"B", B}, {"H_q", H_q}, {"H_kv", H_kv}, {"D", D}, {"page_size", page_size}, {"num_pages", num_pages},
            {"pages_per_seq", pages_per_seq}};
}
}  // namespace

void paged_append_bf16(__nv_bfloat16* k_pages, __nv_bfloat16* v_pages, const __nv_bfloat16* k_new,
                       const __nv_bfloat16* v_new, const int* page_table, const int* lengths, int B, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    const size_t pool = bf16_words(count({num_pages, page_size, H_kv, D})), n = bf16_words(count({B, H_kv, D}));
    NullableArgs a;
    a.add(k_pages, pool, Role::inout), a.add(v_pages, pool, Role::inout), a.add(k_new, n, Role::in), a.add(v_new, n, Role::in);
    a.args.push_back(in(words(page_table), count({B, pages_per_seq}))), a.args.push_back(in(words(lengths), count({B})));
    nlohmann::json s = geometry(B, H_kv, H_kv, D, page_size, num_pages, pages_per_seq);
    s.erase("H_q");  // the append has no query heads
    s["null"] = a.null;
    call("paged_append_bf16", a.args, s);
}

void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    const size_t pool = bf16_words(count({num_pages, page_size, H_kv, D})), n = bf16_words(count({B, H_q, D}));
    NullableArgs a;
    a.add(q, n, Role::in), a.add(k_pages, pool, Role::in), a.add(v_pages, pool, Role::in), a.add(o, n, Role::inout);
    a.args.push_back(in(words(page_table), count({B, pages_per_seq}))), a.args.push_back(in(words(lengths), count({B})));
    nlohmann::json s = geometry(B, H_q, H_kv, D, page_size, num_pages, pages_per_seq);
    s["null"] = a.null;
    call("paged_decode_bf16", a.args, s);
}

}  // namespace task5
