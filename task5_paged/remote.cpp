// remote.cpp — the paged part's interface on the trusted side: the kernels run in runner_task5 (runner.h). bf16
// tensors travel as float words of two bf16 each (an odd count rounds up); the host tables travel as host buffers of
// int32 in float words (the same four bytes); the pools are inout, so that what the append wrote, and nothing else,
// is checked here.
#include <optional>

#include "common/remote/proxy.h"
#include "task5_paged/task5_paged.h"

namespace task5 {

using namespace attn::remote;

namespace {
size_t bf16_words(size_t n) { return (n + 1) / 2; }

// Sends `op` with its device arguments `a`, then the host tables (int32 in float words, the same four bytes), and the
// sizes (the append has no H_q).
void send(const char* op, NullableArgs& a, const int* page_table, const int* lengths, int B, std::optional<int> H_q, int H_kv,
          int D, int page_size, int num_pages, int pages_per_seq) {
    a.args.push_back(in(reinterpret_cast<const float*>(page_table), count({B, pages_per_seq})));
    a.args.push_back(in(reinterpret_cast<const float*>(lengths), count({B})));
    nlohmann::json s = {{"B", B}, {"H_kv", H_kv}, {"D", D}, {"page_size", page_size}, {"num_pages", num_pages},
                        {"pages_per_seq", pages_per_seq}, {"null", a.null}};
    if (H_q) s["H_q"] = *H_q;
    call(op, a.args, s);
}
}  // namespace

void paged_append_bf16(__nv_bfloat16* k_pages, __nv_bfloat16* v_pages, const __nv_bfloat16* k_new,
                       const __nv_bfloat16* v_new, const int* page_table, const int* lengths, int B, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    const size_t pool = bf16_words(count({num_pages, page_size, H_kv, D})), n = bf16_words(count({B, H_kv, D}));
    NullableArgs a;
    a.add(k_pages, pool, Role::inout), a.add(v_pages, pool, Role::inout), a.add(k_new, n, Role::in), a.add(v_new, n, Role::in);
    send("paged_append_bf16", a, page_table, lengths, B, std::nullopt, H_kv, D, page_size, num_pages, pages_per_seq);
}

void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    const size_t pool = bf16_words(count({num_pages, page_size, H_kv, D})), n = bf16_words(count({B, H_q, D}));
    NullableArgs a;
    a.add(q, n, Role::in), a.add(k_pages, pool, Role::in), a.add(v_pages, pool, Role::in), a.add(o, n, Role::inout);
    send("paged_decode_bf16", a, page_table, lengths, B, H_q, H_kv, D, page_size, num_pages, pages_per_seq);
}

void paged_append_f32(float* k_pages, float* v_pages, const float* k_new, const float* v_new, const int* page_table,
                      const int* lengths, int B, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
    const size_t pool = count({num_pages, page_size, H_kv, D}), n = count({B, H_kv, D});
    NullableArgs a;
    a.add(k_pages, pool, Role::inout), a.add(v_pages, pool, Role::inout), a.add(k_new, n, Role::in), a.add(v_new, n, Role::in);
    send("paged_append_f32", a, page_table, lengths, B, std::nullopt, H_kv, D, page_size, num_pages, pages_per_seq);
}

void paged_decode_f32(const float* q, const float* k_pages, const float* v_pages, float* o, const int* page_table,
                      const int* lengths, int B, int H_q, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
    const size_t pool = count({num_pages, page_size, H_kv, D}), n = count({B, H_q, D});
    NullableArgs a;
    a.add(q, n, Role::in), a.add(k_pages, pool, Role::in), a.add(v_pages, pool, Role::in), a.add(o, n, Role::inout);
    send("paged_decode_f32", a, page_table, lengths, B, H_q, H_kv, D, page_size, num_pages, pages_per_seq);
}

}  // namespace task5
