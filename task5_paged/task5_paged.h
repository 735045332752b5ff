// task5_paged.h — Task 5's second part (5b): decode over a paged KV cache, with grouped-query attention. The frozen
// interface.
//
// The cache is a pool of fixed-size pages, handed to sequences as they grow (vLLM's PagedAttention):
//   k_pages, v_pages  [num_pages, page_size, H_kv, D]   device, row-major __nv_bfloat16, 16-byte aligned
//   page_table        [B, pages_per_seq]                host, int32: page_table[b·pages_per_seq + p] is the pool page
//                                                       that holds positions p·page_size … (p+1)·page_size − 1 of
//                                                       sequence b. Entries past a sequence's last page are unused
//                                                       (any value); two sequences may share a page (a common prompt).
//   lengths           [B]                               host, int32: sequence b holds positions 0 … lengths[b] − 1.
//   q, o              [B, H_q, D]                        device, bf16: one query (the newest token) per sequence.
// (paged_append_f32, paged_decode_f32: the same with float32 pools, rows, q and o.)
// Query head h attends with KV head h / g, g = H_q / H_kv (MHA: g = 1; GQA: g = 4 or 8; MQA: H_kv = 1).
// page_size: a power of two from 1 to 256. D ∈ {64, 128}. Scale 1/√D. Work goes on the default stream; the calls
// return without synchronising (the host arrays may be reused as soon as they return).
//
// Bad input throws, naming it, before anything is read or written on the GPU: std::invalid_argument for a size or
// a pointer (H_q not a multiple of H_kv, an unsupported D or page_size, a null or misaligned pointer, B < 1),
// std::out_of_range for the tables (a length below 1 or past pages_per_seq·page_size, a page index outside
// 0 … num_pages − 1 among the pages a sequence uses). Nothing outside the pool and nothing past a sequence's
// length is ever read; nothing but the appended slots is written.
#pragma once
#include <cuda_bf16.h>

namespace task5 {

// task5b.1  append each sequence's new token: k_new, v_new [B, H_kv, D] into position lengths[b] − 1 of sequence
//           b (its page page_table[b·pages_per_seq + (lengths[b] − 1) / page_size], slot (lengths[b] − 1) mod
//           page_size), in place: lengths already count the new token.
void paged_append_bf16(__nv_bfloat16* k_pages, __nv_bfloat16* v_pages, const __nv_bfloat16* k_new,
                       const __nv_bfloat16* v_new, const int* page_table, const int* lengths, int B, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq);

// task5b.2  o[b, h] = softmax(q[b, h]·Kᵀ/√D)·V over positions 0 … lengths[b] − 1 of sequence b, KV head h / g.
//           Only the outputs are rounded to bf16: scores, softmax and sums in float32.
void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq);

// task5b.3, task5b.4  the same two calls on float32 pools, new rows, q and o (16-byte aligned): a cache kept in full
//           precision, as Task 5's. Every value and sum in float32; held to Task 5's tolerance.
void paged_append_f32(float* k_pages, float* v_pages, const float* k_new, const float* v_new, const int* page_table,
                      const int* lengths, int B, int H_kv, int D, int page_size, int num_pages, int pages_per_seq);
void paged_decode_f32(const float* q, const float* k_pages, const float* v_pages, float* o, const int* page_table,
                      const int* lengths, int B, int H_q, int H_kv, int D, int page_size, int num_pages, int pages_per_seq);

}  // namespace task5
