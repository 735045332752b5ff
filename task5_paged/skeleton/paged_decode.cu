// Task 5, part 5b — decode over a paged KV cache with grouped-query attention (interface: task5_paged/task5_paged.h).
//
// Build and run:  make task5-paged                  (your skeleton: the part's tests; on a GPU)
//                 make task5-paged IMPL=reference   (the model solution)
//                 make bench-task5-paged            (GB/s beside a device copy of the same bytes;
//                                                    tools/vs_torch/paged_decode.py times cuDNN, FA2 and FA4 beside it)
// Decode reads every K and V byte of every sequence once per token and does little with each, so it is bound by
// memory bandwidth: the plan is to read each byte once (one block serves a KV head's whole query group), to keep
// enough bytes in flight on every SM (cp.async, several key tiles ahead), and to give every SM the same share of a
// ragged batch (long sequences split across blocks, their parts merged). task5_paged/README.md gives the plan.
// Needs sm_80 or newer (bf16 mma.sync); on an older GPU the calls throw std::runtime_error saying so.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/todo.h"
#include "task5_paged/task5_paged.h"

namespace task5 {

namespace paged_detail {

// What both calls are given, checked once on the host before anything touches the GPU (task5_paged.h).
struct Geometry {
    int B, H_q, H_kv, D, page_size, num_pages, pages_per_seq;
};

inline std::string str(long long x) { return std::to_string(x); }

inline void check_pointer(const char* fn, const char* name, const void* p, bool device) {
    if (!p) throw std::invalid_argument(std::string(fn) + ": " + name + " is a null pointer");
    if (device && reinterpret_cast<uintptr_t>(p) % 16)
        throw std::invalid_argument(std::string(fn) + ": " + name + " is not 16-byte aligned (rows are moved 8 bf16 at a time)");
}

inline void check_sizes(const char* fn, const Geometry& g) {
    for (auto [name, value] : {std::pair{"B", g.B}, std::pair{"H_q", g.H_q}, std::pair{"H_kv", g.H_kv},
                               std::pair{"num_pages", g.num_pages}, std::pair{"pages_per_seq", g.pages_per_seq}})
        if (value < 1) throw std::invalid_argument(std::string(fn) + ": " + name + " = " + str(value) + " (must be at least 1)");
    if (g.H_q % g.H_kv)
        throw std::invalid_argument(std::string(fn) + ": H_q = " + str(g.H_q) + " is not a multiple of H_kv = " + str(g.H_kv) +
                                    " (each KV head serves H_q / H_kv query heads)");
    if (g.D != 64 && g.D != 128)
        throw std::invalid_argument(std::string(fn) + ": head_dim " + str(g.D) + " is not supported (64 or 128)");
    if (g.page_size < 1 || g.page_size > 256 || (g.page_size & (g.page_size - 1)))
        throw std::invalid_argument(std::string(fn) + ": page_size " + str(g.page_size) + " is not a power of two from 1 to 256");
}

// Sequence b's length and its pages (only the one holding the last position when `last_page_only`).
inline void check_tables(const char* fn, const Geometry& g, const int* table, const int* lengths, bool last_page_only) {
    const long long capacity = (long long)g.pages_per_seq * g.page_size;
    for (int b = 0; b < g.B; ++b) {
        const int len = lengths[b];
        if (len < 1 || len > capacity)
            throw std::out_of_range(std::string(fn) + ": lengths[" + str(b) + "] = " + str(len) + " is " +
                                    (len < 1 ? "below 1" : "past its page table (" + str(g.pages_per_seq) + " pages of " +
                                                               str(g.page_size) + " = " + str(capacity) + " positions)"));
        const int used = (len + g.page_size - 1) / g.page_size;
        for (int p = last_page_only ? used - 1 : 0; p < used; ++p) {
            const int page = table[(size_t)b * g.pages_per_seq + p];
            if (page < 0 || page >= g.num_pages)
                throw std::out_of_range(std::string(fn) + ": page_table[" + str(b) + "][" + str(p) + "] = " + str(page) +
                                        " is outside the pool of " + str(g.num_pages) + " pages (sequence " + str(b) +
                                        " of length " + str(len) + " uses its pages 0 … " + str(used - 1) + ")");
        }
    }
}

// Every check of a call, in this order: the sizes, the pointers (`device` ones 16-byte aligned), the tables.
inline void check_call(const char* fn, const Geometry& g, std::initializer_list<std::pair<const char*, const void*>> device,
                       const int* table, const int* lengths, bool last_page_only) {
    check_sizes(fn, g);
    for (auto [name, p] : device) check_pointer(fn, name, p, true);
    check_pointer(fn, "page_table", table, false);
    check_pointer(fn, "lengths", lengths, false);
    check_tables(fn, g, table, lengths, last_page_only);
}

// Device memory kept between calls, grown in stream order when a call needs more (freed with cudaFreeAsync, so
// kernels already queued keep theirs): a call that allocates and frees its scratch spends host time in the driver
// that the GPU waits through, and a decode step is only a few hundred microseconds.
inline void* kept_device_memory(int which, size_t bytes, bool zeroed = false) {
    static void* p[3] = {};
    static size_t have[3] = {};
    if (have[which] < bytes) {
        if (p[which]) CUDA_CHECK(cudaFreeAsync(p[which], 0));
        have[which] = std::max<size_t>(bytes, 1 << 16);
        CUDA_CHECK(cudaMallocAsync(&p[which], have[which], 0));
        if (zeroed) CUDA_CHECK(cudaMemsetAsync(p[which], 0, have[which], 0));
    }
    return p[which];
}

// n floats of scratch (a split's partial results), valid for kernels launched after this on stream 0 until the next call.
inline float* scratch_floats(size_t n) { return static_cast<float*>(kept_device_memory(1, n * sizeof(float))); }

// n counters, zero between calls (whoever counts to the end puts its counter back to zero).
inline int* zeroed_counters(size_t n) { return static_cast<int*>(kept_device_memory(2, n * sizeof(int), true)); }

// Host ints (a table, a plan) on the device in stream order: the pieces one after another, valid for kernels launched
// after this on stream 0 until the next upload; the host arrays may change once this returns. They travel inside the
// parameters of small copy kernels (write_ints), not by a copy engine: a copy from pinned memory queued behind other
// work held the decode that followed it back by 0.4–1 ms in a third of the runs (docs/perf.md, "5b's large page
// tables by copy kernels, not a DMA"); a launch's parameters need no staging buffer either.
template <int N>  // N ints a launch: 30 KB for a page table (kernel parameters may take 32,764 bytes from CUDA 12.1 on
struct IntChunk {  // sm_70 and newer), 1 KB for an append's rows (a launch copies all of its parameters, used or not)
    int* dst;
    int n;
    int v[N];
};
template <int N>
__global__ void write_ints_kernel(const __grid_constant__ IntChunk<N> c) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < c.n; i += gridDim.x * blockDim.x) c.dst[i] = c.v[i];
}
template <int N>
void write_ints(int* dev, std::initializer_list<std::pair<const int*, size_t>> pieces) {
    static IntChunk<N> chunk;  // not on the stack; each launch copies it
    chunk.dst = dev, chunk.n = 0;
    auto send = [&] {
        if (chunk.n == 0) return;
        write_ints_kernel<N><<<(chunk.n + 255) / 256, 256>>>(chunk);
        CUDA_CHECK_LAUNCH();
        chunk.dst += chunk.n, chunk.n = 0;
    };
    for (auto [p, n] : pieces)
        for (size_t i = 0; i < n;) {
            const size_t take = std::min(n - i, size_t(N - chunk.n));
            std::memcpy(chunk.v + chunk.n, p + i, take * sizeof(int));
            chunk.n += int(take), i += take;
            if (chunk.n == N) send();
        }
    send();
}
inline const int* upload_ints(std::initializer_list<std::pair<const int*, size_t>> pieces) {
    size_t total = 0;
    for (auto [p, n] : pieces) total += n;
    int* dev = static_cast<int*>(kept_device_memory(0, total * sizeof(int)));
    if (total <= 256) write_ints<256>(dev, pieces);
    else write_ints<7680>(dev, pieces);
    return dev;
}
inline const int* upload_ints(const std::vector<int>& host) { return upload_ints({{host.data(), host.size()}}); }

}  // namespace paged_detail

// ------------------------------------------------------------------------------------------------
// The plan (task5_paged/README.md, "The plan"): the ladder's first rungs are yours to climb.
//   task5b.1  paged_append_bf16: check the arguments and the tables (paged_detail::check_call), then
//             compute on the host each sequence's destination row, page·page_size + slot, copy those B ints to the
//             device (paged_detail::upload_ints) and launch one block per (sequence, KV head) that moves the D bf16
//             of K and of V (16 bytes a thread).
//   task5b.2  paged_decode_bf16: the same checks; the page table to the device (upload_ints); then, simplest first, one warp per
//             (sequence, query head): its KV head is h / g; walk positions 0 … length − 1, find each one's page in
//             the table (page_table[b][pos / page_size], slot pos % page_size), keep a running max and sum (Task 5's
//             online softmax) and the output in float32, write o in bf16. The README's ladder says what comes next:
//             one block per KV head serving its whole query group, so that each K and V byte is read once for g
//             heads, then long sequences split across blocks and merged.
//   task5b.3  paged_append_f32: task5b.1 on a float32 pool (16 bytes a thread are 4 floats).
//   task5b.4  paged_decode_f32: task5b.2 on float32 pools, q and o: every value and sum in float32, held to Task 5's
//             tolerance (no bf16 anywhere: the tensor cores' bf16 path is not for these caches).
// ------------------------------------------------------------------------------------------------

void paged_append_bf16(__nv_bfloat16* k_pages, __nv_bfloat16* v_pages, const __nv_bfloat16* k_new,
                       const __nv_bfloat16* v_new, const int* page_table, const int* lengths, int B, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    // TODO(task5b.1): the plan above.
    (void)k_pages, (void)v_pages, (void)k_new, (void)v_new, (void)page_table, (void)lengths, (void)B, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.1");
}

void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
    // TODO(task5b.2): the plan above.
    (void)q, (void)k_pages, (void)v_pages, (void)o, (void)page_table, (void)lengths, (void)B, (void)H_q, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.2");
}

void paged_append_f32(float* k_pages, float* v_pages, const float* k_new, const float* v_new, const int* page_table,
                      const int* lengths, int B, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
    // TODO(task5b.3): the plan above.
    (void)k_pages, (void)v_pages, (void)k_new, (void)v_new, (void)page_table, (void)lengths, (void)B, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.3");
}

void paged_decode_f32(const float* q, const float* k_pages, const float* v_pages, float* o, const int* page_table,
                      const int* lengths, int B, int H_q, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
    // TODO(task5b.4): the plan above.
    (void)q, (void)k_pages, (void)v_pages, (void)o, (void)page_table, (void)lengths, (void)B, (void)H_q, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.4");
}

}  // namespace task5
