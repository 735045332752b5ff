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
#if SOLUTION
#include "task4_bf16/reference/bf16_mma.cuh"
#endif

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

#if SOLUTION
namespace paged_detail {

using namespace task4::bf16_detail;  // cp.async, ldmatrix, mma.sync m16n8k16 (task4_bf16/reference/bf16_mma.cuh)

constexpr int kKeys = 64;     // keys a tile: 4 warps × 16
constexpr int kThreads = 128;
// A block serves 16 query heads of a KV head's group, the rows of one mma tile: a group of 4 or 8 leaves the other
// rows zero, which costs nothing a memory-bound kernel feels. A larger group (MQA's 32) takes several blocks, launched
// side by side, so that all but the first find each K and V tile in L2 (measured on an H200: 7–10 % faster at MQA
// than one block of 32 rows, whose twice as many registers leave too few warps on an SM to hide the loads behind).
constexpr int kRows = 16;

// Each sequence's pool row for its newest position, page · page_size + slot (from the checked tables), on the device.
static const int* append_rows(const int* table, const int* lengths, int B, int page_size, int pages_per_seq) {
    std::vector<int> dst(B);
    for (int b = 0; b < B; ++b) {
        const int pos = lengths[b] - 1;
        dst[b] = table[(size_t)b * pages_per_seq + pos / page_size] * page_size + pos % page_size;
    }
    return upload_ints(dst);
}

// The append, for bf16 and float32 pools: one block per (sequence, KV head), D / kPer16Bytes<T> threads each moving 16
// bytes of K and of V to the pool row `dst_row[b]` (page · page_size + slot, computed on the host from the checked tables).
template <class T>
constexpr int kPer16Bytes = 16 / sizeof(T);
template <class T>
__global__ void append_kernel(T* k_pages, T* v_pages, const T* k_new, const T* v_new, const int* dst_row, int H_kv, int D) {
    const int b = blockIdx.x, h = blockIdx.y, e = threadIdx.x * kPer16Bytes<T>;
    const size_t dst = ((size_t)dst_row[b] * H_kv + h) * D + e, src = ((size_t)b * H_kv + h) * D + e;
    *reinterpret_cast<uint4*>(k_pages + dst) = *reinterpret_cast<const uint4*>(k_new + src);
    *reinterpret_cast<uint4*>(v_pages + dst) = *reinterpret_cast<const uint4*>(v_new + src);
}

// One piece of work: keys [key0, key1) of sequence b, piece s of its n, done by one block for each KV head (and row
// block). A sequence split into n > 1 pieces keeps a partial result per piece and KV head, part first + kvh·n + s;
// the block that finishes its (sequence, KV head)'s last piece merges them (merge_parts). The sequence's pages in use
// start at entry `table0` of the compact table.
struct Item {
    int b, key0, key1, first, s, n, table0;
};

struct DecodeParams {
    const __nv_bfloat16 *q, *k_pages, *v_pages;
    __nv_bfloat16* o;
    const int* ints;        // the compact page table, then the items (when not in the launch: DecodeArgs)
    float *part_o, *part_lse;  // [parts, g, D] and [parts, g]: a split piece's normalised output and log2-sum-exp
    int* done;              // [parts, row_blocks]: pieces finished, counted at part first + kvh·n (zero between calls)
    long long table_ints;   // the compact table's entries: where the items start
    int H_q, H_kv, g, row_blocks, page_shift;
    float scale_log2;       // log2(e)/√D
};

// The kernel's argument. The page table and the items travel inside it when they fit (N = 1024, 2048, 4096 or at most
// kInlineInts; kernel parameters may take 32,764 bytes from CUDA 12.1 on sm_70 and newer): then the kernel waits for no copy to the
// device, which at a small batch is several microseconds of a call that lasts tens. Otherwise (N = 1) they are copied
// to the device first (upload_ints) and p.ints points there.
constexpr int kInlineInts = 7680;  // 30 KB
template <int N>
struct DecodeArgs {
    DecodeParams p;
    int ints[N];
};

// The most float4s of output one thread combines or merges: a block's 16 rows of D / 4 float4s over its threads.
template <int D>
constexpr int kChunks = kRows * (D / 4) / kThreads;

// Four bf16 of o from four floats, one 8-byte store.
__device__ inline void store_bf16x4(__nv_bfloat16* out, float4 x) {
    *reinterpret_cast<uint2*>(out) = make_uint2(pack_bf16(x.x, x.y), pack_bf16(x.z, x.w));
}

// The merge of NCH float4s of output a thread (the chunks tid, tid + kThreads, …; those past the block's rows load
// nothing and store nothing, with no branch between the chunks, so that their loads go out together), G
// parts' outputs and log2-sum-exps loaded together, a running max rescaling what is summed so far: one round trip to
// L2 for each G parts. Part s's row r starts at float4 (row0 + s·g + r)·D/4 of part_o.
template <int D, int NCH, int G>
__device__ void merge_chunks(const DecodeParams& p, const Item& it, size_t row0, int head0, int rows) {
    constexpr int C4 = D / 4;  // float4s a row
    const float4* part[NCH];
    const float* lse[NCH];
    bool mine[NCH];  // the chunk is one of the block's rows
    float M[NCH], L[NCH];
    float4 O[NCH];
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
        const int c = threadIdx.x + i * kThreads;
        mine[i] = c / C4 < rows;
        const int r = mine[i] ? c / C4 : 0;  // a chunk past the rows points at row 0 and is never read
        part[i] = reinterpret_cast<const float4*>(p.part_o + (row0 + r) * D) + c % C4;
        lse[i] = p.part_lse + row0 + r;
        M[i] = -INFINITY, L[i] = 0.f, O[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    const size_t step = (size_t)p.g * C4;  // float4s from one part to the next
    for (int s = 0; s < it.n; s += G) {
        float4 x[NCH][G];
        float e[NCH][G];
#pragma unroll
        for (int i = 0; i < NCH; ++i)
#pragma unroll
            for (int u = 0; u < G; ++u) {
                const bool have = mine[i] && s + u < it.n;
                x[i][u] = have ? __ldcg(part[i] + (s + u) * step) : make_float4(0.f, 0.f, 0.f, 0.f);
                e[i][u] = have ? __ldcg(lse[i] + (size_t)(s + u) * p.g) : -INFINITY;
            }
#pragma unroll
        for (int i = 0; i < NCH; ++i) {
            float M_new = M[i];
#pragma unroll
            for (int u = 0; u < G; ++u) M_new = fmaxf(M_new, e[i][u]);
            const float rescale = M[i] == -INFINITY ? 0.f : exp2f(M[i] - M_new);  // nothing summed yet on the first group
            O[i].x *= rescale, O[i].y *= rescale, O[i].z *= rescale, O[i].w *= rescale, L[i] *= rescale;
#pragma unroll
            for (int u = 0; u < G; ++u) {
                const float w = exp2f(e[i][u] - M_new);
                O[i].x += w * x[i][u].x, O[i].y += w * x[i][u].y, O[i].z += w * x[i][u].z, O[i].w += w * x[i][u].w, L[i] += w;
            }
            M[i] = M_new;
        }
    }
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
        const int c = threadIdx.x + i * kThreads, r = c / C4;
        const float inv = 1.f / L[i];
        if (mine[i])
            store_bf16x4(p.o + ((size_t)it.b * p.H_q + head0 + r) * D + 4 * (c % C4),
                         make_float4(O[i].x * inv, O[i].y * inv, O[i].z * inv, O[i].w * inv));
    }
}

// The last block to finish a split (sequence, KV head, row block) merges its n parts: each part's output weighted by
// 2^(lse − max), summed, divided by the weights' sum (merge_chunks). The parts are read past L1 (__ldcg): they were
// written by other SMs, made visible by the fence before the count (one thread's, after the barrier that orders every
// thread's stores before it: a fence's effect is cumulative). The merge is the last thing a split sequence waits for:
// where a thread has one chunk (up to 4 query heads at D = 128, 8 at D = 64), 8 parts' loads go out at once; where it
// has several (MQA: 4 chunks of 2 parts), all its chunks' loads for 4 parts at a time.
template <int D>
__device__ void merge_parts(const DecodeParams& p, const Item& it, int kvh, int rb, int rows) {
    __shared__ int last;
    const size_t first = (size_t)it.first + (size_t)kvh * it.n;
    __syncthreads();  // every thread's part is written
    if (threadIdx.x == 0) {
        int* done = p.done + first * p.row_blocks + rb;
        __threadfence();
        last = atomicAdd(done, 1) == it.n - 1;
        if (last) *done = 0, __threadfence();  // ready for the next call; the others' parts are visible from here
    }
    __syncthreads();
    if (!last) return;
    const size_t row0 = first * p.g + rb * kRows;
    const int head0 = kvh * p.g + rb * kRows;
    if (rows * (D / 4) <= kThreads) merge_chunks<D, 1, 8>(p, it, row0, head0, rows);
    else merge_chunks<D, kChunks<D>, 4>(p, it, row0, head0, rows);
}

// K and V pass through the L2 once, so their loads mark the lines evict-first, leaving the L2 to what a call reads
// again: the split pieces' parts in the merge, the page table, the query (which of these mattered was not measured).
// On an H200 this took the ragged batch 2.6–3.3 % faster and B = 1 0.7–0.9 %, the 1 GB rows level and MQA 0.4–1.8 %
// slower; MQA's loads left unmarked (a branch at each load) lost as much (docs/perf.md, "5b's loads: L2 hints").
__device__ __forceinline__ unsigned long long evict_first_policy() {
    unsigned long long policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}
__device__ __forceinline__ void cp_async16_evict_first(unsigned dst, const void* src, bool valid, unsigned long long policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0),
                 "l"(policy));
}

// Block (item, KV head, row block): query heads kvh·g + 16·rb … of sequence b against the item's keys. Each warp owns
// 16 keys of every 64-key tile and keeps its own running max, sum and output (16 × D in mma C fragments; the query's
// A fragments stay in registers); the four are combined through shared memory at the end. Key tiles come page by
// page with cp.async, STAGES − 1 tiles ahead; keys past the item's end are zero-filled and masked, so nothing past a
// sequence's length is read. (The launch bounds' minimum of one block an SM lets ptxas take the registers it needs:
// without a minimum, CUDA 13.0 held the three-stage kernel to 168 and spilled.)
template <int D, int STAGES, int N>
__global__ void __launch_bounds__(kThreads, 1) decode_kernel(const __grid_constant__ DecodeArgs<N> args) {
    constexpr int CH = D / 8;  // 16-byte chunks a row
    const DecodeParams& p = args.p;
    const int* ints = N > 1 ? args.ints : p.ints;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __nv_bfloat16* sK = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    __nv_bfloat16* sV = sK + STAGES * kKeys * D;
    __nv_bfloat16* sQ = sV + STAGES * kKeys * D;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int units = p.H_kv * p.row_blocks, unit = blockIdx.x % units, kvh = unit / p.row_blocks, rb = unit % p.row_blocks;
    const Item it = reinterpret_cast<const Item*>(ints + p.table_ints)[blockIdx.x / units];
    const int head0 = kvh * p.g + rb * kRows, rows = min(kRows, p.g - rb * kRows);
    const __nv_bfloat16* q = p.q + ((size_t)it.b * p.H_q + head0) * D;
    const int* table = ints + it.table0;
    const int page_mask = (1 << p.page_shift) - 1;

    // Each thread moves one 16-byte column `ch` of rows r0, r0 + RSTEP, … of every tile, for K and for V (the two
    // share their offsets). Where a page holds the whole tile (page_size ≥ 64: tiles start at multiples of 64), one
    // table lookup serves the tile's rows; smaller pages look each row's page up.
    constexpr int RSTEP = kThreads / CH, PER = kKeys / RSTEP;
    const int ch = tid % CH, r0 = tid / CH;
    const size_t row_stride = (size_t)p.H_kv * D;  // elements from one slot of a page to the next
    const __nv_bfloat16* k_head = p.k_pages + (size_t)kvh * D + ch * 8;
    const __nv_bfloat16* v_head = p.v_pages + (size_t)kvh * D + ch * 8;
    const bool whole_page = p.page_shift >= 6;
    // Shared-memory addresses of this thread's chunks of K in the stage the next load fills (V's are a fixed step past
    // them), moved on a stage after each load. Kept whole in each thread, not as stage 0's plus an offset the block
    // shares: CUDA 13.0's ptxas puts such an offset in a uniform register, and a cp.async that adds one and also carries
    // an L2 hint it encodes with registers nothing writes, an illegal instruction at run time (sm_90, four stages;
    // docs/perf.md, "An illegal instruction in 5b's four-stage decode").
    constexpr unsigned kStageBytes = kKeys * D * sizeof(__nv_bfloat16), kToV = STAGES * kStageBytes;
    unsigned k_dst[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) k_dst[i] = smem_u32(sK + tile_offset<D, true>(r0 + i * RSTEP, ch));
    int fill = 0;  // the stage k_dst is in
    const size_t step = RSTEP * row_stride;  // from one of a thread's rows to its next, in a page that holds the tile
    const unsigned long long policy = evict_first_policy();
    auto load_tile = [&](int key_start) {
        if (whole_page) {  // the branch is the same for the whole block: no divergence
            const __nv_bfloat16* k = k_head + ((size_t)table[key_start >> p.page_shift] << p.page_shift | (key_start & page_mask)) *
                                                  row_stride + r0 * row_stride;
            const __nv_bfloat16* v = v_head + (k - k_head);
            const int rows_left = it.key1 - key_start - r0;  // row r0 + i·RSTEP exists iff i·RSTEP < rows_left
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const bool valid = i * RSTEP < rows_left;
                cp_async16_evict_first(k_dst[i], valid ? k + i * step : k_head, valid, policy);
                cp_async16_evict_first(k_dst[i] + kToV, valid ? v + i * step : v_head, valid, policy);
            }
        } else {
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int pos = key_start + r0 + i * RSTEP;
                const bool valid = pos < it.key1;
                const size_t off =
                    valid ? ((size_t)table[pos >> p.page_shift] << p.page_shift | (pos & page_mask)) * row_stride : 0;
                cp_async16_evict_first(k_dst[i], k_head + off, valid, policy);
                cp_async16_evict_first(k_dst[i] + kToV, v_head + off, valid, policy);
            }
        }
        const bool wrap = ++fill == STAGES;
        if (wrap) fill = 0;
#pragma unroll
        for (int i = 0; i < PER; ++i) k_dst[i] = wrap ? k_dst[i] - (STAGES - 1) * kStageBytes : k_dst[i] + kStageBytes;
    };
    // The block's query rows (zeros past the group) travel with the first tile, by cp.async. Loaded through registers,
    // they held each thread until they arrived before it could ask for any key tile: on an H200 this took MQA 1–2 %
    // faster and B = 1 0.5 % (docs/perf.md, "5b's query by cp.async; where MQA's time goes").
    auto load_query = [&] {
        for (int c = tid; c < kRows * CH; c += kThreads) {
            const int r = c / CH, ch = c % CH;
            cp_async16(smem_u32(sQ + tile_offset<D, true>(r, ch)), q + (size_t)min(r, rows - 1) * D + ch * 8, r < rows);
        }
    };
    const int tiles = (it.key1 - it.key0 + kKeys - 1) / kKeys;
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_tile(it.key0 + s * kKeys);  // stage s
        if (s == 0) load_query();
        cp_async_commit();
    }

    cp_async_wait<STAGES - 2>();  // the first group: the first tile and the query rows
    __syncthreads();              // each warp keeps the query's A fragments in registers
    unsigned qa[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
        ldmatrix_x4(smem_u32(sQ + tile_offset<D, true>(lane % 8 + ((lane / 8) % 2) * 8, 2 * kk + lane / 16)), qa[kk][0], qa[kk][1],
                    qa[kk][2], qa[kk][3]);

    float acc[D / 8][4] = {};
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows lane/4 and lane/4 + 8, in log2 units
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (t + STAGES - 1 < tiles) load_tile(it.key0 + (t + STAGES - 1) * kKeys);  // stage (t + STAGES − 1) mod STAGES
        cp_async_commit();
        const __nv_bfloat16* k = sK + (t % STAGES) * kKeys * D;
        const __nv_bfloat16* v = sV + (t % STAGES) * kKeys * D;
        float s[2][4] = {};
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {  // S = Q·Kᵀ for this warp's 16 keys
            unsigned b0, b1, b2, b3;
            ldmatrix_x4(smem_u32(k + tile_offset<D, true>(warp * 16 + (lane / 16) * 8 + lane % 8, 2 * kk + (lane / 8) % 2)), b0,
                        b1, b2, b3);
            mma_bf16(s[0], qa[kk], b0, b1);
            mma_bf16(s[1], qa[kk], b2, b3);
        }
        // Scores stay unscaled until the exponent: 2^(s·scale − max), one FFMA each (scale > 0 keeps the max's place).
        const int key_base = it.key0 + t * kKeys + warp * 16 + 2 * (lane % 4);
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (key_base + j * 8 + (e & 1) >= it.key1) s[j][e] = -INFINITY;
                mx[e / 2] = fmaxf(mx[e / 2], s[j][e]);
            }
        float alpha[2], base[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            const float m_new = fmaxf(m[r], mx[r] * p.scale_log2);
            base[r] = m_new == -INFINITY ? 0.f : m_new;  // a warp whose keys are all masked so far: no NaN from −∞ − −∞
            alpha[r] = exp2f(m[r] - base[r]);
            m[r] = m_new;
            l[r] *= alpha[r];
        }
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s[j][e] = exp2f(fmaf(s[j][e], p.scale_log2, -base[e / 2]));
                l[e / 2] += s[j][e];
            }
        if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f))  // the max rarely moves after a few tiles
#pragma unroll
            for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[nt][e] *= alpha[e / 2];
        const unsigned pa[4] = {pack_bf16(s[0][0], s[0][1]), pack_bf16(s[0][2], s[0][3]), pack_bf16(s[1][0], s[1][1]),
                                pack_bf16(s[1][2], s[1][3])};
#pragma unroll
        for (int nn = 0; nn < D / 16; ++nn) {  // O += P·V
            unsigned b0, b1, b2, b3;
            ldmatrix_x4_trans(smem_u32(v + tile_offset<D, true>(warp * 16 + lane % 8 + ((lane / 8) % 2) * 8, 2 * nn + lane / 16)),
                              b0, b1, b2, b3);
            mma_bf16(acc[2 * nn], pa, b0, b1);
            mma_bf16(acc[2 * nn + 1], pa, b2, b3);
        }
    }
    cp_async_wait<0>();
    __syncthreads();  // the tiles are done with: their memory holds the four warps' results now

    // Rows of D + 8 floats: a warp's float2 stores of its C fragments then fall on 32 different banks (rows D apart put
    // a warp's 32 lanes on 4 banks: 8-way conflicts), and the combine's reads along a row are unchanged.
    constexpr int kAccStride = D + 8;
    float* w_acc = reinterpret_cast<float*>(smem_raw);  // [4][kRows][kAccStride]
    float* w_m = w_acc + 4 * kRows * kAccStride;        // [4][kRows]
    float* w_l = w_m + 4 * kRows;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
        const int row = lane / 4 + 8 * r;
        if (lane % 4 == 0) w_m[warp * kRows + row] = m[r], w_l[warp * kRows + row] = l[r];
    }
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            *reinterpret_cast<float2*>(w_acc + (warp * kRows + lane / 4 + 8 * h) * kAccStride + nt * 8 + 2 * (lane % 4)) =
                make_float2(acc[nt][2 * h], acc[nt][2 * h + 1]);
    __syncthreads();
    // The four warps' results combined, each warp's row weighted by 2^(m − max). Thread t serves row t / T and its
    // float4s t % T, t % T + T, … (k of them, T = D/4 / k threads a row; k = 1, 2 or 4, as few as the block's rows
    // allow): each thread weighs the four warps' rows once, not once for each of its values.
    const bool split = it.n > 1;
    constexpr int C4 = D / 4;
    int k = 1;
    while (k < kChunks<D> && rows * C4 > k * kThreads) k *= 2;
    const int T = C4 / k, r = tid / T, j = tid % T;
    if (r < rows) {
        float M = -INFINITY, L = 0.f, scale[4];
#pragma unroll
        for (int w = 0; w < 4; ++w) M = fmaxf(M, w_m[w * kRows + r]);
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            scale[w] = w_m[w * kRows + r] == -INFINITY ? 0.f : exp2f(w_m[w * kRows + r] - M);
            L += w_l[w * kRows + r] * scale[w];
        }
        const float inv = 1.f / L;
        const size_t part_row = ((size_t)it.first + (size_t)kvh * it.n + it.s) * p.g + rb * kRows + r;
#pragma unroll
        for (int i = 0; i < kChunks<D>; ++i) {
            if (i >= k) break;
            const int d4 = j + i * T;
            float4 O = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const float4 x = *reinterpret_cast<const float4*>(w_acc + (w * kRows + r) * kAccStride + 4 * d4);
                O.x += scale[w] * x.x, O.y += scale[w] * x.y, O.z += scale[w] * x.z, O.w += scale[w] * x.w;
            }
            O.x *= inv, O.y *= inv, O.z *= inv, O.w *= inv;
            if (!split) store_bf16x4(p.o + ((size_t)it.b * p.H_q + head0 + r) * D + 4 * d4, O);
            else reinterpret_cast<float4*>(p.part_o + part_row * D)[d4] = O;
        }
        if (split && j == 0) p.part_lse[part_row] = M + log2f(L);
    }
    if (split) merge_parts<D>(p, it, kvh, rb, rows);
}

// The memory's peak bytes a second for each SM: its clock (kHz, two transfers a cycle) × its bus (bits) / 8 / SMs.
inline double dram_bytes_per_second_per_sm() {
    return 2e3 * attn::cached_device_attribute<cudaDevAttrMemoryClockRate>() *
           (attn::cached_device_attribute<cudaDevAttrGlobalMemoryBusWidth>() / 8.0) / attn::sm_count();
}

// Shared memory a block of decode_kernel<D, STAGES, N> takes, set as its limit once; how many fit an SM.
template <int D, int STAGES, int N>
static int blocks_per_sm(size_t smem) {
    static const int n = [smem] {
        CUDA_CHECK(cudaFuncSetAttribute(decode_kernel<D, STAGES, N>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        int k = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k, decode_kernel<D, STAGES, N>, kThreads, smem));
        return std::max(k, 1);
    }();
    return n;
}

// Shared memory a block of decode_kernel<D, STAGES, ·> takes: each stage's K and V tiles, and the query rows.
template <int D, int STAGES>
constexpr size_t kDecodeSmem = size_t(2 * STAGES * kKeys + kRows) * D * sizeof(__nv_bfloat16);

template <int D, int STAGES>
static void launch(const Geometry& g, const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                   __nv_bfloat16* o, const int* table, const int* lengths) {
    constexpr size_t smem = kDecodeSmem<D, STAGES>;
    static_assert(smem >= (4 * kRows * (D + 8) + 8 * kRows) * sizeof(float), "the warps' results must fit the tiles' memory");
    const int group = g.H_q / g.H_kv, row_blocks = (group + kRows - 1) / kRows;
    const long long units = (long long)g.H_kv * row_blocks;
    const long long slots = (long long)attn::sm_count() *
                            std::min({blocks_per_sm<D, STAGES, 1>(smem), blocks_per_sm<D, STAGES, 1024>(smem),
                                      blocks_per_sm<D, STAGES, 2048>(smem), blocks_per_sm<D, STAGES, 4096>(smem),
                                      blocks_per_sm<D, STAGES, kInlineInts>(smem)});
    // Every sequence's t tiles become pieces of ceil(t / ceil(t / c)) ≤ c tiles, the last of them possibly shorter (155
    // tiles at c = 11: 14 of 11 and one of 1), for each KV head (and row block).
    // Pieces run in waves of `slots` blocks, so c is the one with the shortest estimate, waves × (c + 1): a piece's
    // tiles and about one more for its start and its merge. One wave of equal pieces is the best; a ragged batch's
    // short sequences simply fill in. The estimate needs only how many sequences have each tile count (a decode
    // step's host time is time the GPU waits: a batch of 256 equal lengths is one count, not 256).
    std::vector<int> tiles(g.B);
    for (int b = 0; b < g.B; ++b) tiles[b] = (lengths[b] + kKeys - 1) / kKeys;
    std::vector<std::pair<int, int>> counts;  // (tiles, sequences with that many)
    {
        std::vector<int> sorted = tiles;
        if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
        for (int t : sorted)
            if (!counts.empty() && counts.back().first == t) ++counts.back().second;
            else counts.push_back({t, 1});
    }
    const int most = counts.back().first;
    int chunk = most;
    double best = 1e300;
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256}) {
        const int c = (most + n - 1) / n;
        long long pieces = 0;
        for (auto [t, k] : counts) pieces += (long long)k * ((t + c - 1) / c);
        const double estimate = double((pieces * units + slots - 1) / slots) * (c + 1);
        if (estimate < best) best = estimate, chunk = c;
        if (c == 1) break;
    }
    // The compact page table: each sequence's pages in use, one after another, sequence b's from start[b]. A ragged
    // batch's table is mostly entries past its lengths (the benchmark's 32 sequences of 1 … 32,768 positions over pages of
    // 64 use 1,909 of 16,384), and a table that fits in the decode's parameters waits for no copy.
    std::vector<int> start(g.B + 1, 0);  // sequence b's pages in use: entries start[b] … start[b + 1] − 1
    for (int b = 0; b < g.B; ++b) start[b + 1] = start[b] + (lengths[b] + g.page_size - 1) / g.page_size;
    const size_t table_ints = size_t(start[g.B]);
    auto gather_table = [&](int* dst) {
        for (int b = 0; b < g.B; ++b) std::copy_n(table + (size_t)b * g.pages_per_seq, start[b + 1] - start[b], dst + start[b]);
    };
    std::vector<Item> items;  // each sequence's pieces; a block per piece, KV head and row block
    int parts = 0;            // partial results: only split sequences keep them
    for (int b = 0; b < g.B; ++b) {
        const int t = tiles[b], n0 = (t + chunk - 1) / chunk, per = (t + n0 - 1) / n0, n = (t + per - 1) / per;
        for (int s = 0; s < n; ++s)
            items.push_back({b, s * per * kKeys, std::min(lengths[b], (s + 1) * per * kKeys), n > 1 ? parts : 0, s, n, start[b]});
        if (n > 1) parts += n * g.H_kv;
    }
    // The longest sequences first, each one's pieces side by side: in a ragged batch the short sequences fill the last
    // wave instead of the long ones running alone. Not the longest pieces first: the last of a sequence's pieces to
    // finish merges all its parts (47 at the benchmark's ragged batch's longest sequence, microseconds of reads from L2),
    // and a sequence's shorter last piece, sorted to the final wave, put those merges at the end of the call (5 % of the
    // ragged batch on an H200: docs/perf.md, "5b's ragged batch: a split sequence's pieces together").
    auto longer_sequence = [&tiles](const Item& x, const Item& y) { return tiles[x.b] > tiles[y.b]; };
    if (!std::is_sorted(items.begin(), items.end(), longer_sequence)) std::stable_sort(items.begin(), items.end(), longer_sequence);
    const size_t part_rows = size_t(std::max(parts, 1)) * group;
    float* part_o = scratch_floats(part_rows * (D + 1));
    int shift = 0;
    while ((1 << shift) < g.page_size) ++shift;
    const size_t item_ints = items.size() * (sizeof(Item) / sizeof(int));
    DecodeParams p{q, k_pages, v_pages, o, nullptr, part_o, part_o + part_rows * D, zeroed_counters(part_rows / group * row_blocks),
                   (long long)table_ints, g.H_q, g.H_kv, group, row_blocks, shift, float(1.4426950408889634 / std::sqrt(double(D)))};
    const unsigned blocks = unsigned(items.size() * units);
    // The table and the items inside the launch, in the smallest of four sizes that holds them (a launch copies all of
    // its parameters, used or not).
    auto launch_inline = [&](auto n) {
        constexpr int N = decltype(n)::value;
        static DecodeArgs<N> args;  // up to 30 KB: not on the stack; copied by the launch
        args.p = p;
        gather_table(args.ints);
        std::copy_n(reinterpret_cast<const int*>(items.data()), item_ints, args.ints + table_ints);
        decode_kernel<D, STAGES, N><<<blocks, kThreads, smem>>>(args);
    };
    const size_t inline_ints = table_ints + item_ints;
    if (inline_ints <= 1024) {
        launch_inline(std::integral_constant<int, 1024>{});
    } else if (inline_ints <= 2048) {
        launch_inline(std::integral_constant<int, 2048>{});
    } else if (inline_ints <= 4096) {
        launch_inline(std::integral_constant<int, 4096>{});
    } else if (inline_ints <= size_t(kInlineInts)) {
        launch_inline(std::integral_constant<int, kInlineInts>{});
    } else {  // copied to the device first: the page table, then the items
        static std::vector<int> compact;  // kept: a decode step's host time is time the GPU waits
        compact.resize(table_ints);
        gather_table(compact.data());
        p.ints = upload_ints({{compact.data(), table_ints}, {reinterpret_cast<const int*>(items.data()), item_ints}});
        decode_kernel<D, STAGES, 1><<<blocks, kThreads, smem>>>(DecodeArgs<1>{p, {0}});
    }
    CUDA_CHECK_LAUNCH();
}

// ---- float32 caches (task5b.3, task5b.4): CUDA cores, no tensor cores, the same split-and-merge -----------------------

constexpr int kF32Warps = 4;  // a block's warps take every 4th position of its piece
constexpr int kF32Heads = 8;  // query heads a block serves: each K and V row is read once for up to 8 of them

// One block per (sequence and KV head: x, up to 2³¹ − 1 of them; piece of the sequence: y; up to 8 query heads of its group: z). Lane l holds head dims l·E … l·E+E−1
// (E = D/32: one float4 of K and of V a lane at D = 128); a position's scores are warp sums. Each warp keeps an online
// softmax per head (max and sum in log2 units); the warps meet in shared memory; the block writes its piece's
// unnormalised output and (max, sum) for merge_f32_kernel. A piece past its sequence's length writes an empty result.
template <int D>
__global__ void __launch_bounds__(kF32Warps * 32) decode_f32_kernel(const float* q, const float* k_pages, const float* v_pages,
                                                                    const int* table, const int* lengths, float* part, int H_q,
                                                                    int H_kv, int page_size, int pages_per_seq, int pieces,
                                                                    int piece_len, float scale_log2) {
    constexpr int E = D / 32;
    __shared__ float red_acc[kF32Warps][kF32Heads][D], red_m[kF32Warps][kF32Heads], red_l[kF32Warps][kF32Heads];
    const int piece = blockIdx.y, b = int(blockIdx.x) / H_kv, kvh = int(blockIdx.x) % H_kv, g = H_q / H_kv;
    const int head0 = kvh * g + int(blockIdx.z) * kF32Heads, heads = min(kF32Heads, g - int(blockIdx.z) * kF32Heads);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int L = lengths[b], begin = piece * piece_len, end = min(L, begin + piece_len);
    float qv[kF32Heads][E], acc[kF32Heads][E], m[kF32Heads], l[kF32Heads];
#pragma unroll
    for (int j = 0; j < kF32Heads; ++j) {
        m[j] = -INFINITY, l[j] = 0.f;
#pragma unroll
        for (int e = 0; e < E; ++e)
            acc[j][e] = 0.f, qv[j][e] = j < heads ? q[((size_t)b * H_q + head0 + j) * D + lane * E + e] * scale_log2 : 0.f;
    }
    for (int pos = begin + warp; pos < end; pos += kF32Warps) {
        const int page = table[(size_t)b * pages_per_seq + pos / page_size];
        const size_t row = (((size_t)page * page_size + pos % page_size) * H_kv + kvh) * D + lane * E;
        float kk[E], vv[E];
#pragma unroll
        for (int e = 0; e < E; e += 2) {
            const float2 k2 = *reinterpret_cast<const float2*>(k_pages + row + e), v2 = *reinterpret_cast<const float2*>(v_pages + row + e);
            kk[e] = k2.x, kk[e + 1] = k2.y, vv[e] = v2.x, vv[e + 1] = v2.y;
        }
        float s[kF32Heads];
#pragma unroll
        for (int j = 0; j < kF32Heads; ++j) {
            s[j] = 0.f;
#pragma unroll
            for (int e = 0; e < E; ++e) s[j] += qv[j][e] * kk[e];
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2)
#pragma unroll
            for (int j = 0; j < kF32Heads; ++j) s[j] += __shfl_xor_sync(0xffffffffu, s[j], off);
#pragma unroll
        for (int j = 0; j < kF32Heads; ++j) {
            const float mn = fmaxf(m[j], s[j]), c = exp2f(m[j] - mn), p = exp2f(s[j] - mn);
            l[j] = l[j] * c + p, m[j] = mn;
#pragma unroll
            for (int e = 0; e < E; ++e) acc[j][e] = acc[j][e] * c + p * vv[e];
        }
    }
#pragma unroll
    for (int j = 0; j < kF32Heads; ++j) {
        if (lane == 0) red_m[warp][j] = m[j], red_l[warp][j] = l[j];
#pragma unroll
        for (int e = 0; e < E; ++e) red_acc[warp][j][lane * E + e] = acc[j][e];
    }
    __syncthreads();
    // thread t merges the warps' results for head t / D's dims … (every (head, dim) once)
    for (int i = threadIdx.x; i < heads * D; i += kF32Warps * 32) {
        const int j = i / D, d = i % D;
        float mx = -INFINITY;
        for (int w = 0; w < kF32Warps; ++w) mx = fmaxf(mx, red_m[w][j]);
        float sum = 0.f, o = 0.f;
        if (mx != -INFINITY)
            for (int w = 0; w < kF32Warps; ++w) {
                const float c = exp2f(red_m[w][j] - mx);
                sum += red_l[w][j] * c, o += red_acc[w][j][d] * c;
            }
        // part: per (sequence, query head), `pieces` outputs of D floats, then `pieces` (max, sum) pairs
        float* at = part + ((size_t)b * H_q + head0 + j) * pieces * (D + 2);
        at[(size_t)piece * D + d] = o;
        if (d == 0) at[(size_t)pieces * D + 2 * piece] = mx, at[(size_t)pieces * D + 2 * piece + 1] = sum;
    }
}

// o[b, h] from its pieces: one block of D threads per (sequence, query head).
__global__ void merge_f32_kernel(const float* part, float* o, int pieces, int D) {
    const float* at = part + (size_t)blockIdx.x * pieces * (D + 2);
    const float* ml = at + (size_t)pieces * D;
    float mx = -INFINITY;
    for (int s = 0; s < pieces; ++s) mx = fmaxf(mx, ml[2 * s]);
    float sum = 0.f, acc = 0.f;
    for (int s = 0; s < pieces; ++s)
        if (ml[2 * s] != -INFINITY) {
            const float c = exp2f(ml[2 * s] - mx);
            sum += ml[2 * s + 1] * c, acc += at[(size_t)s * D + threadIdx.x] * c;
        }
    o[(size_t)blockIdx.x * D + threadIdx.x] = acc / sum;
}

template <int D>
static void launch_f32(const Geometry& g, const float* q, const float* k_pages, const float* v_pages, float* o, const int* table,
                       const int* lengths) {
    const int max_len = *std::max_element(lengths, lengths + g.B);
    const int head_blocks = (g.H_q / g.H_kv + kF32Heads - 1) / kF32Heads;
    // Pieces of one length for every sequence (at least 64 positions), sized so that the batch's positions make about
    // four blocks a SM; a short sequence's pieces past its length exit at once, so a ragged batch's long sequences are
    // cut as finely as a uniform batch's.
    long long work = 0;
    for (int b = 0; b < g.B; ++b) work += (long long)lengths[b] * g.H_kv * head_blocks;
    const int piece_len = int(std::max<long long>(64, (work + 4LL * attn::sm_count() - 1) / (4LL * attn::sm_count())));
    const int pieces = (max_len + piece_len - 1) / piece_len;
    const size_t table_ints = (size_t)g.B * g.pages_per_seq;
    const int* ints = upload_ints({{table, table_ints}, {lengths, (size_t)g.B}});
    float* part = scratch_floats((size_t)g.B * g.H_q * pieces * (D + 2));
    decode_f32_kernel<D><<<dim3(unsigned(g.B * g.H_kv), pieces, head_blocks), kF32Warps * 32>>>(
        q, k_pages, v_pages, ints, ints + table_ints, part, g.H_q, g.H_kv, g.page_size, g.pages_per_seq, pieces, piece_len,
        float(1.4426950408889634 / std::sqrt(double(D))));
    CUDA_CHECK_LAUNCH();
    merge_f32_kernel<<<unsigned(g.B * g.H_q), D>>>(part, o, pieces, D);
    CUDA_CHECK_LAUNCH();
}

}  // namespace paged_detail
#else
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
#endif

void paged_append_bf16(__nv_bfloat16* k_pages, __nv_bfloat16* v_pages, const __nv_bfloat16* k_new,
                       const __nv_bfloat16* v_new, const int* page_table, const int* lengths, int B, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
#if SOLUTION
    using namespace paged_detail;
    const char* fn = "paged_append_bf16";
    check_call(fn, {B, H_kv, H_kv, D, page_size, num_pages, pages_per_seq},
               {{"k_pages", k_pages}, {"v_pages", v_pages}, {"k_new", k_new}, {"v_new", v_new}}, page_table, lengths, true);
    attn::require_bf16_mma(fn);
    append_kernel<<<dim3(B, H_kv), D / (kPer16Bytes<__nv_bfloat16>)>>>(
        k_pages, v_pages, k_new, v_new, append_rows(page_table, lengths, B, page_size, pages_per_seq), H_kv, D);
    CUDA_CHECK_LAUNCH();
#else
    // TODO(task5b.1): the plan above.
    (void)k_pages, (void)v_pages, (void)k_new, (void)v_new, (void)page_table, (void)lengths, (void)B, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.1");
#endif
}

void paged_decode_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                       __nv_bfloat16* o, const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D,
                       int page_size, int num_pages, int pages_per_seq) {
#if SOLUTION
    using namespace paged_detail;
    const char* fn = "paged_decode_bf16";
    const Geometry g{B, H_q, H_kv, D, page_size, num_pages, pages_per_seq};
    check_call(fn, g, {{"q", q}, {"k_pages", k_pages}, {"v_pages", v_pages}, {"o", o}}, page_table, lengths, false);
    attn::require_bf16_mma(fn);
    if (D == 64) return launch<64, 4>(g, q, k_pages, v_pages, o, page_table, lengths);
    // A group larger than one row tile (MQA's 32) is served by blocks side by side that read the same tiles. Where the
    // memory serves each SM less than 30 GB/s (an H100: 25), four stages (one block an SM, so one piece a sequence at
    // MQA) read MQA's bytes 4–6 % faster than three; where it serves more (an H200: 37), three stages (two blocks an SM,
    // two pieces a sequence) are 5–7 % faster than four. Smaller groups keep three (docs/perf.md, "MQA with four stages"
    // and "MQA's stages on the H200"), or two where a block's shared memory cannot hold three (99 KB on sm_86 and sm_89).
    const size_t room = attn::cached_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>();
    if (H_q / H_kv > kRows && dram_bytes_per_second_per_sm() < 30e9 && kDecodeSmem<128, 4> <= room)
        return launch<128, 4>(g, q, k_pages, v_pages, o, page_table, lengths);
    if (kDecodeSmem<128, 3> <= room) return launch<128, 3>(g, q, k_pages, v_pages, o, page_table, lengths);
    return launch<128, 2>(g, q, k_pages, v_pages, o, page_table, lengths);
#else
    // TODO(task5b.2): the plan above.
    (void)q, (void)k_pages, (void)v_pages, (void)o, (void)page_table, (void)lengths, (void)B, (void)H_q, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.2");
#endif
}

void paged_append_f32(float* k_pages, float* v_pages, const float* k_new, const float* v_new, const int* page_table,
                      const int* lengths, int B, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
#if SOLUTION
    using namespace paged_detail;
    check_call("paged_append_f32", {B, H_kv, H_kv, D, page_size, num_pages, pages_per_seq},
               {{"k_pages", k_pages}, {"v_pages", v_pages}, {"k_new", k_new}, {"v_new", v_new}}, page_table, lengths, true);
    append_kernel<<<dim3(B, H_kv), D / (kPer16Bytes<float>)>>>(k_pages, v_pages, k_new, v_new,
                                                          append_rows(page_table, lengths, B, page_size, pages_per_seq), H_kv, D);
    CUDA_CHECK_LAUNCH();
#else
    // TODO(task5b.3): the plan above.
    (void)k_pages, (void)v_pages, (void)k_new, (void)v_new, (void)page_table, (void)lengths, (void)B, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.3");
#endif
}

void paged_decode_f32(const float* q, const float* k_pages, const float* v_pages, float* o, const int* page_table,
                      const int* lengths, int B, int H_q, int H_kv, int D, int page_size, int num_pages, int pages_per_seq) {
#if SOLUTION
    using namespace paged_detail;
    const Geometry g{B, H_q, H_kv, D, page_size, num_pages, pages_per_seq};
    check_call("paged_decode_f32", g, {{"q", q}, {"k_pages", k_pages}, {"v_pages", v_pages}, {"o", o}}, page_table, lengths, false);
    if (D == 64) return launch_f32<64>(g, q, k_pages, v_pages, o, page_table, lengths);
    return launch_f32<128>(g, q, k_pages, v_pages, o, page_table, lengths);
#else
    // TODO(task5b.4): the plan above.
    (void)q, (void)k_pages, (void)v_pages, (void)o, (void)page_table, (void)lengths, (void)B, (void)H_q, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.4");
#endif
}

}  // namespace task5
