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
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/cuda/cuda_check.h"
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
inline void* kept_device_memory(int which, size_t bytes) {
    static void* p[2] = {};
    static size_t have[2] = {};
    if (have[which] < bytes) {
        if (p[which]) CUDA_CHECK(cudaFreeAsync(p[which], 0));
        have[which] = std::max<size_t>(bytes, 1 << 16);
        CUDA_CHECK(cudaMallocAsync(&p[which], have[which], 0));
    }
    return p[which];
}

// n floats of scratch (a split's partial results), valid for kernels launched after this on stream 0 until the next call.
inline float* scratch_floats(size_t n) { return static_cast<float*>(kept_device_memory(1, n * sizeof(float))); }

// Host ints (a table, a plan) on the device in stream order: the pieces one after another, valid for kernels launched
// after this on stream 0 until the next upload; the host arrays may change once this returns. They go straight into
// pinned memory, a ring of four buffers each reused once its last copy is done, so that the copy is a plain DMA queued
// in stream order.
inline const int* upload_ints(std::initializer_list<std::pair<const int*, size_t>> pieces) {
    struct Staging {
        int* p = nullptr;
        size_t n = 0;
        cudaEvent_t done = nullptr;
    };
    static Staging ring[4];
    static unsigned next = 0;
    size_t total = 0;
    for (auto [p, n] : pieces) total += n;
    Staging& s = ring[next++ % 4];
    if (!s.done) CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventSynchronize(s.done));  // its previous copy has left it
    if (s.n < total) {
        if (s.p) CUDA_CHECK(cudaFreeHost(s.p));
        s.n = std::max<size_t>(total, 1 << 14);
        CUDA_CHECK(cudaMallocHost(&s.p, s.n * sizeof(int)));
    }
    int* at = s.p;
    for (auto [p, n] : pieces) at = std::copy(p, p + n, at);
    int* dev = static_cast<int*>(kept_device_memory(0, total * sizeof(int)));
    CUDA_CHECK(cudaMemcpyAsync(dev, s.p, total * sizeof(int), cudaMemcpyHostToDevice, 0));
    CUDA_CHECK(cudaEventRecord(s.done, 0));
    return dev;
}
inline const int* upload_ints(const std::vector<int>& host) { return upload_ints({{host.data(), host.size()}}); }

}  // namespace paged_detail

#if SOLUTION
namespace paged_detail {

using namespace task4::bf16_detail;  // cp.async, ldmatrix, mma.sync m16n8k16 (task4_bf16/reference/bf16_mma.cuh)

constexpr int kKeys = 64;     // keys a tile: 4 warps × 16
constexpr int kThreads = 128;
// A block serves 16 query heads of a KV head's group (one mma row tile; a group of 4 or 8 leaves the other rows
// zero, which costs nothing a memory-bound kernel feels) or 32 (two row tiles: MQA's group of 32 reads each K and V
// byte into shared memory once instead of twice). A larger group takes several blocks.
template <int MT>
constexpr int kRowsOf = 16 * MT;


// Asked once a process (cudaGetDeviceProperties alone costs tens of microseconds: a decode step's host time).
static const std::string& missing_bf16_mma() {
    static const std::string why = [] {
        int dev = 0, major = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        if (major >= 8) return std::string();
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
        return std::string(prop.name) + " has no bf16 tensor cores (mma.sync m16n8k16 bf16 needs sm_80 or newer)";
    }();
    return why;
}

// The append: one block per (sequence, KV head), D/8 threads each moving 16 bytes of K and of V to the pool row
// `dst_row[b]` (page · page_size + slot, computed on the host from the checked tables).
__global__ void append_kernel(__nv_bfloat16* k_pages, __nv_bfloat16* v_pages, const __nv_bfloat16* k_new,
                              const __nv_bfloat16* v_new, const int* dst_row, int H_kv, int D) {
    const int b = blockIdx.x, h = blockIdx.y;
    const size_t dst = ((size_t)dst_row[b] * H_kv + h) * D + threadIdx.x * 8, src = ((size_t)b * H_kv + h) * D + threadIdx.x * 8;
    *reinterpret_cast<uint4*>(k_pages + dst) = *reinterpret_cast<const uint4*>(k_new + src);
    *reinterpret_cast<uint4*>(v_pages + dst) = *reinterpret_cast<const uint4*>(v_new + src);
}

// One unit of work: keys [key0, key1) of sequence b, KV head kvh. A sequence split into n parts has n pieces per KV
// head, numbered `part` = its first part + kvh·n + piece: where their partial results go for merge_kernel.
struct Item {
    int b, kvh, key0, key1, part;
};

struct DecodeParams {
    const __nv_bfloat16 *q, *k_pages, *v_pages;
    __nv_bfloat16* o;
    const int* table;       // [B, pages_per_seq]
    const Item* items;
    const int* splits;      // [B]: how many items each (sequence, KV head) has
    float *part_o, *part_lse;  // [parts, g, D] and [parts, g]: a split piece's normalised output and log2-sum-exp
    int H_q, H_kv, g, row_blocks, page_shift, pages_per_seq;
    float scale_log2;       // log2(e)/√D
};

// Block (item, row block): query heads kvh·g + ROWS·rb … of sequence b against the item's keys. Each warp owns 16 keys
// of every 64-key tile and keeps its own running max, sum and output (ROWS × D in mma C fragments); the four are
// combined through shared memory at the end. Key tiles come page by page with cp.async, STAGES − 1 tiles ahead;
// keys past the item's end are zero-filled and masked, so nothing past a sequence's length is read.
template <int D, int STAGES, int MT>
__global__ void __launch_bounds__(kThreads) decode_kernel(DecodeParams p) {
    constexpr int CH = D / 8, ROWS = kRowsOf<MT>;  // 16-byte chunks a row; query rows a block
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __nv_bfloat16* sK = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    __nv_bfloat16* sV = sK + STAGES * kKeys * D;
    __nv_bfloat16* sQ = sV + STAGES * kKeys * D;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const long long item_index = blockIdx.x / p.row_blocks;
    const int rb = blockIdx.x % p.row_blocks;
    const Item it = p.items[item_index];
    const int head0 = it.kvh * p.g + rb * ROWS, rows = min(ROWS, p.g - rb * ROWS);
    const __nv_bfloat16* q = p.q + ((size_t)it.b * p.H_q + head0) * D;
    const int* table = p.table + (size_t)it.b * p.pages_per_seq;
    const int page_mask = (1 << p.page_shift) - 1;

    for (int c = tid; c < ROWS * CH; c += kThreads) {  // the block's query rows (zeros past the group)
        const int r = c / CH, ch = c % CH;
        const uint4 x = r < rows ? *reinterpret_cast<const uint4*>(q + (size_t)r * D + ch * 8) : make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(sQ + tile_offset<D, true>(r, ch)) = x;
    }
    // Each thread moves one 16-byte column `ch` of rows r0, r0 + RSTEP, … of every tile, for K and for V (the two
    // share their offsets). Where a page holds the whole tile (page_size ≥ 64: tiles start at multiples of 64), one
    // table lookup serves the tile's rows; smaller pages look each row's page up.
    constexpr int RSTEP = kThreads / CH, PER = kKeys / RSTEP;
    const int ch = tid % CH, r0 = tid / CH;
    const size_t row_stride = (size_t)p.H_kv * D;  // elements from one slot of a page to the next
    const __nv_bfloat16* k_head = p.k_pages + (size_t)it.kvh * D + ch * 8;
    const __nv_bfloat16* v_head = p.v_pages + (size_t)it.kvh * D + ch * 8;
    const bool whole_page = p.page_shift >= 6;
    // Shared-memory addresses of this thread's chunks in stage 0 (a stage further is a fixed step), once.
    unsigned k_dst[PER], v_dst[PER];
#pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int off = tile_offset<D, true>(r0 + i * RSTEP, ch);
        k_dst[i] = smem_u32(sK + off), v_dst[i] = smem_u32(sV + off);
    }
    constexpr unsigned kStageBytes = kKeys * D * sizeof(__nv_bfloat16);
    const size_t step = RSTEP * row_stride;  // from one of a thread's rows to its next, in a page that holds the tile
    auto load_tile = [&](int stage, int key_start) {
        const unsigned at = stage * kStageBytes;
        if (whole_page) {  // the branch is the same for the whole block: no divergence
            const __nv_bfloat16* k = k_head + ((size_t)table[key_start >> p.page_shift] << p.page_shift | (key_start & page_mask)) *
                                                  row_stride + r0 * row_stride;
            const __nv_bfloat16* v = v_head + (k - k_head);
            const int rows_left = it.key1 - key_start - r0;  // row r0 + i·RSTEP exists iff i·RSTEP < rows_left
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const bool valid = i * RSTEP < rows_left;
                cp_async16(k_dst[i] + at, valid ? k + i * step : k_head, valid);
                cp_async16(v_dst[i] + at, valid ? v + i * step : v_head, valid);
            }
        } else {
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int pos = key_start + r0 + i * RSTEP;
                const bool valid = pos < it.key1;
                const size_t off =
                    valid ? ((size_t)table[pos >> p.page_shift] << p.page_shift | (pos & page_mask)) * row_stride : 0;
                cp_async16(k_dst[i] + at, k_head + off, valid);
                cp_async16(v_dst[i] + at, v_head + off, valid);
            }
        }
    };
    const int tiles = (it.key1 - it.key0 + kKeys - 1) / kKeys;
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_tile(s, it.key0 + s * kKeys);
        cp_async_commit();
    }

    float acc[MT][D / 8][4] = {};
    float m[MT][2], l[MT][2];  // rows lane/4 and lane/4 + 8 of each row tile, in log2 units
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.f;
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (t + STAGES - 1 < tiles) load_tile((t + STAGES - 1) % STAGES, it.key0 + (t + STAGES - 1) * kKeys);
        cp_async_commit();
        const __nv_bfloat16* k = sK + (t % STAGES) * kKeys * D;
        const __nv_bfloat16* v = sV + (t % STAGES) * kKeys * D;
        float s[MT][2][4] = {};
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {  // S = Q·Kᵀ for this warp's 16 keys (Q's fragments from shared memory)
            unsigned b0, b1, b2, b3;
            ldmatrix_x4(smem_u32(k + tile_offset<D, true>(warp * 16 + (lane / 16) * 8 + lane % 8, 2 * kk + (lane / 8) % 2)), b0,
                        b1, b2, b3);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                unsigned a[4];
                ldmatrix_x4(smem_u32(sQ + tile_offset<D, true>(mt * 16 + lane % 8 + ((lane / 8) % 2) * 8, 2 * kk + lane / 16)), a[0],
                            a[1], a[2], a[3]);
                mma_bf16(s[mt][0], a, b0, b1);
                mma_bf16(s[mt][1], a, b2, b3);
            }
        }
        const int key_base = it.key0 + t * kKeys + warp * 16 + 2 * (lane % 4);
        unsigned pa[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    s[mt][j][e] = key_base + j * 8 + (e & 1) < it.key1 ? s[mt][j][e] * p.scale_log2 : -INFINITY;
                    mx[e / 2] = fmaxf(mx[e / 2], s[mt][j][e]);
                }
            float alpha[2], base[2];
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
                mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
                const float m_new = fmaxf(m[mt][r], mx[r]);
                base[r] = m_new == -INFINITY ? 0.f : m_new;  // a warp whose keys are all masked so far: no NaN from −∞ − −∞
                alpha[r] = exp2f(m[mt][r] - base[r]);
                m[mt][r] = m_new;
                l[mt][r] *= alpha[r];
            }
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    s[mt][j][e] = exp2f(s[mt][j][e] - base[e / 2]);
                    l[mt][e / 2] += s[mt][j][e];
                }
            if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f))  // the max rarely moves after a few tiles
#pragma unroll
                for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[mt][nt][e] *= alpha[e / 2];
            pa[mt][0] = pack_bf16(s[mt][0][0], s[mt][0][1]), pa[mt][1] = pack_bf16(s[mt][0][2], s[mt][0][3]);
            pa[mt][2] = pack_bf16(s[mt][1][0], s[mt][1][1]), pa[mt][3] = pack_bf16(s[mt][1][2], s[mt][1][3]);
        }
#pragma unroll
        for (int nn = 0; nn < D / 16; ++nn) {  // O += P·V
            unsigned b0, b1, b2, b3;
            ldmatrix_x4_trans(smem_u32(v + tile_offset<D, true>(warp * 16 + lane % 8 + ((lane / 8) % 2) * 8, 2 * nn + lane / 16)),
                              b0, b1, b2, b3);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                mma_bf16(acc[mt][2 * nn], pa[mt], b0, b1);
                mma_bf16(acc[mt][2 * nn + 1], pa[mt], b2, b3);
            }
        }
    }
    cp_async_wait<0>();
    __syncthreads();  // the tiles are done with: their memory holds the four warps' results now

    float* w_acc = reinterpret_cast<float*>(smem_raw);  // [4][ROWS][D]
    float* w_m = w_acc + 4 * ROWS * D;                  // [4][ROWS]
    float* w_l = w_m + 4 * ROWS;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            l[mt][r] += __shfl_xor_sync(0xffffffffu, l[mt][r], 1);
            l[mt][r] += __shfl_xor_sync(0xffffffffu, l[mt][r], 2);
            const int row = mt * 16 + lane / 4 + 8 * r;
            if (lane % 4 == 0) w_m[warp * ROWS + row] = m[mt][r], w_l[warp * ROWS + row] = l[mt][r];
        }
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                w_acc[(warp * ROWS + mt * 16 + lane / 4 + 8 * (e / 2)) * D + nt * 8 + 2 * (lane % 4) + (e & 1)] = acc[mt][nt][e];
    }
    __syncthreads();
    const bool split = p.splits[it.b] > 1;
    for (int c = tid; c < rows * D; c += kThreads) {
        const int r = c / D, d = c % D;
        float M = -INFINITY;
#pragma unroll
        for (int w = 0; w < 4; ++w) M = fmaxf(M, w_m[w * ROWS + r]);
        float L = 0.f, O = 0.f;
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            const float scale = w_m[w * ROWS + r] == -INFINITY ? 0.f : exp2f(w_m[w * ROWS + r] - M);
            L += w_l[w * ROWS + r] * scale;
            O += w_acc[(w * ROWS + r) * D + d] * scale;
        }
        if (!split) {
            p.o[((size_t)it.b * p.H_q + head0 + r) * D + d] = __float2bfloat16_rn(O / L);
        } else {
            const size_t row = (size_t)it.part * p.g + rb * ROWS + r;
            p.part_o[row * D + d] = O / L;
            if (d == 0) p.part_lse[row] = M + log2f(L);
        }
    }
}

// One block per (split sequence, query head): the parts' outputs weighted by 2^(lse − max), D threads.
struct MergeParams {
    const int* merge;  // [n, 2]: sequence, its first part
    const int* splits;
    const float *part_o, *part_lse;
    __nv_bfloat16* o;
    int H_q, g;
};

__global__ void merge_kernel(MergeParams p) {
    const int i = blockIdx.x / p.H_q, h = blockIdx.x % p.H_q, d = threadIdx.x, D = blockDim.x;
    const int b = p.merge[2 * i], n = p.splits[b], first = p.merge[2 * i + 1] + (h / p.g) * n, r = h % p.g;
    float M = -INFINITY;
    for (int s = 0; s < n; ++s) M = fmaxf(M, p.part_lse[(size_t)(first + s) * p.g + r]);
    float L = 0.f, O = 0.f;
    for (int s = 0; s < n; ++s) {
        const size_t row = (size_t)(first + s) * p.g + r;
        const float w = exp2f(p.part_lse[row] - M);
        L += w;
        O += w * p.part_o[row * D + d];
    }
    p.o[((size_t)b * p.H_q + h) * D + d] = __float2bfloat16_rn(O / L);
}

static int sm_count() {
    static const int n = [] {
        int dev = 0, count = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev));
        return count;
    }();
    return n;
}

template <int D, int STAGES, int MT>
static void launch(const Geometry& g, const __nv_bfloat16* q, const __nv_bfloat16* k_pages, const __nv_bfloat16* v_pages,
                   __nv_bfloat16* o, const int* table, const int* lengths) {
    constexpr int ROWS = kRowsOf<MT>;
    constexpr size_t smem = size_t(2 * STAGES * kKeys + ROWS) * D * sizeof(__nv_bfloat16);
    static_assert(smem >= (4 * ROWS * D + 8 * ROWS) * sizeof(float), "the warps' results must fit the tiles' memory");
    static const int blocks_per_sm = [] {
        CUDA_CHECK(cudaFuncSetAttribute(decode_kernel<D, STAGES, MT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
        int n = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, decode_kernel<D, STAGES, MT>, kThreads, smem));
        return std::max(n, 1);
    }();
    const int group = g.H_q / g.H_kv, row_blocks = (group + ROWS - 1) / ROWS;
    const long long units = (long long)g.H_kv * row_blocks, slots = (long long)sm_count() * blocks_per_sm;
    std::vector<int> tiles(g.B);
    int most = 1;
    for (int b = 0; b < g.B; ++b) tiles[b] = (lengths[b] + kKeys - 1) / kKeys, most = std::max(most, tiles[b]);
    // Every sequence's t tiles become ceil(t / c) pieces of nearly equal length, for each KV head (and row block).
    // Pieces run in waves of `slots` blocks, so c is the one with the shortest estimate, waves × (c + 1): a piece's
    // tiles and about one more for its start and its merge. One wave of equal pieces is the best; a ragged batch's
    // short sequences simply fill in.
    int chunk = most;
    double best = 1e300;
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256}) {
        const int c = (most + n - 1) / n;
        long long pieces = 0;
        for (int t : tiles) pieces += (t + c - 1) / c;
        const double estimate = double((pieces * units + slots - 1) / slots) * (c + 1);
        if (estimate < best) best = estimate, chunk = c;
        if (c == 1) break;
    }
    std::vector<int> splits(g.B);  // each sequence's pieces per KV head
    std::vector<Item> items;
    std::vector<int> merge;  // (sequence, its first part) of each split sequence
    int parts = 0;
    for (int b = 0; b < g.B; ++b) {
        const int t = tiles[b], n0 = (t + chunk - 1) / chunk, per = (t + n0 - 1) / n0, n = (t + per - 1) / per;
        splits[b] = n;
        if (n > 1) merge.push_back(b), merge.push_back(parts);
        for (int h = 0; h < g.H_kv; ++h)
            for (int s = 0; s < n; ++s, ++parts)
                items.push_back({b, h, s * per * kKeys, std::min(lengths[b], (s + 1) * per * kKeys), parts});
    }
    // The longest pieces first: in a ragged batch the short ones fill the last wave instead of the long ones running alone.
    auto longer = [](const Item& x, const Item& y) { return x.key1 - x.key0 > y.key1 - y.key0; };
    if (!std::is_sorted(items.begin(), items.end(), longer)) std::stable_sort(items.begin(), items.end(), longer);
    // On the device, one after another: the page table, the split counts, the items, the merge list.
    const size_t table_ints = size_t(g.B) * g.pages_per_seq, item_ints = items.size() * sizeof(Item) / sizeof(int);
    const int* dev = upload_ints({{table, table_ints},
                                  {splits.data(), splits.size()},
                                  {reinterpret_cast<const int*>(items.data()), item_ints},
                                  {merge.data(), merge.size()}});
    const int* dev_splits = dev + table_ints;
    const Item* dev_items = reinterpret_cast<const Item*>(dev_splits + g.B);
    const int* dev_merge = dev_splits + g.B + item_ints;
    const size_t part_rows = merge.empty() ? 1 : size_t(parts) * group;  // split outputs need room; one row otherwise
    float* part_o = scratch_floats(part_rows * (D + 1));
    float* part_lse = part_o + part_rows * D;
    int shift = 0;
    while ((1 << shift) < g.page_size) ++shift;
    const DecodeParams p{q, k_pages, v_pages, o, dev, dev_items, dev_splits, part_o, part_lse, g.H_q, g.H_kv, group, row_blocks,
                         shift, g.pages_per_seq, float(1.4426950408889634 / std::sqrt(double(D)))};
    decode_kernel<D, STAGES, MT><<<unsigned(items.size() * row_blocks), kThreads, smem>>>(p);
    CUDA_CHECK_LAUNCH();
    if (!merge.empty()) {
        const MergeParams mp{dev_merge, dev_splits, part_o, part_lse, o, g.H_q, group};
        merge_kernel<<<unsigned(merge.size() / 2 * g.H_q), D>>>(mp);
        CUDA_CHECK_LAUNCH();
    }
}

static void require_bf16_mma(const char* fn) {
    if (!missing_bf16_mma().empty()) throw std::runtime_error(std::string(fn) + ": " + missing_bf16_mma());
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
    require_bf16_mma(fn);
    std::vector<int> dst(B);
    for (int b = 0; b < B; ++b) {
        const int pos = lengths[b] - 1;
        dst[b] = page_table[(size_t)b * pages_per_seq + pos / page_size] * page_size + pos % page_size;
    }
    append_kernel<<<dim3(B, H_kv), D / 8>>>(k_pages, v_pages, k_new, v_new, upload_ints(dst), H_kv, D);
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
    require_bf16_mma(fn);
    const bool wide = H_q / H_kv > 16;  // a group of more than 16 query heads: blocks of 32
    if (D == 64) return wide ? launch<64, 4, 2>(g, q, k_pages, v_pages, o, page_table, lengths)
                             : launch<64, 4, 1>(g, q, k_pages, v_pages, o, page_table, lengths);
    return wide ? launch<128, 3, 2>(g, q, k_pages, v_pages, o, page_table, lengths)
                : launch<128, 3, 1>(g, q, k_pages, v_pages, o, page_table, lengths);
#else
    // TODO(task5b.2): the plan above.
    (void)q, (void)k_pages, (void)v_pages, (void)o, (void)page_table, (void)lengths, (void)B, (void)H_q, (void)H_kv, (void)D,
        (void)page_size, (void)num_pages, (void)pages_per_seq;
    ATTNLAB_TODO("task5b.2");
#endif
}

}  // namespace task5
