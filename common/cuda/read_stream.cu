// read_stream.cu — kernels that only read (read_stream.h): the ceiling for kernels that read their inputs once (one
//   buffer, or a paged cache's pages where they lie), which bench_task5_paged times beside a copy of the same bytes, and
//   the benchmarks' L2 flush (bench.cpp). Built into every program by the Makefile (HARNESS_SRC).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/read_stream.h"

namespace attn {
namespace {

// Each thread XORs what it reads so that the loads cannot be dropped; the result is written only if it equals a value
// it has no reason to take (and no one reads it), so the kernel's only traffic is its reads. STREAMING: the loads marked
// evict-first (__ldcs), so that the bytes pass through; otherwise plain L2 loads (__ldcg), whose lines replace the
// ones the L2 held (an evict-first line would be the first to go, leaving the old ones in place).
template <bool STREAMING>
__device__ __forceinline__ uint4 load(const uint4* p) {
    return STREAMING ? __ldcs(p) : __ldcg(p);
}

// The loop both kernels share: chunks 0 … n − 1 (chunk i at at(i)), grid-stride, four loads in flight a thread.
template <bool STREAMING, class I, class At>
__device__ __forceinline__ void read_chunks(I n, At at, unsigned* sink) {
    unsigned acc = 0;
    const I stride = I(gridDim.x) * blockDim.x;
    I i = I(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = load<STREAMING>(at(i)), b = load<STREAMING>(at(i + stride)), c = load<STREAMING>(at(i + 2 * stride)),
                    d = load<STREAMING>(at(i + 3 * stride));
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        const uint4 a = load<STREAMING>(at(i));
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;
}

template <bool STREAMING>
__global__ void read_kernel(const uint4* __restrict__ p, size_t n, unsigned* sink) {
    read_chunks<STREAMING>(n, [p](size_t i) { return p + i; }, sink);
}

// read_pages' kernel: chunk i of the 2·n·P (P = 16-byte chunks a page) is pool i / (n·P)'s chunk i mod P of page
// pages[(i mod n·P) / P]; 32-bit indices (the caller checks that they fit).
__global__ void read_pages_kernel(const uint4* __restrict__ k, const uint4* __restrict__ v, const int* __restrict__ pages,
                                  unsigned per_pool, unsigned per_page, unsigned* sink) {
    read_chunks<true>(
        2 * per_pool,
        [=](unsigned i) {
            const unsigned j = i < per_pool ? i : i - per_pool, page = j / per_page;
            return (i < per_pool ? k : v) + (size_t)pages[page] * per_page + (j - page * per_page);
        },
        sink);
}

constexpr int kReadBlocks = 2048, kReadThreads = 512;  // every SM full (4 blocks of 512) several times over; 528 … 2112 measured alike

unsigned* read_sink() {
    static unsigned* sink = [] {
        unsigned* s = nullptr;
        CUDA_CHECK(cudaMalloc(&s, kReadBlocks * sizeof(unsigned)));
        return s;
    }();
    return sink;
}

template <bool STREAMING>
void read_all(const char* fn, const void* p, size_t bytes, cudaStream_t stream) {
    if (reinterpret_cast<uintptr_t>(p) % 16 || bytes % 16)
        throw std::invalid_argument(std::string(fn) + ": the buffer (" + std::to_string(bytes) + " bytes) must be 16-byte aligned and sized");
    read_kernel<STREAMING><<<kReadBlocks, kReadThreads, 0, stream>>>(static_cast<const uint4*>(p), bytes / 16, read_sink());
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void read_stream(const void* p, size_t bytes) { read_all<true>("read_stream", p, bytes, 0); }

void read_pages(const void* k, const void* v, const int* pages, int n, size_t page_bytes) {
    if (reinterpret_cast<uintptr_t>(k) % 16 || reinterpret_cast<uintptr_t>(v) % 16 || page_bytes % 16 || page_bytes == 0 || n < 1)
        throw std::invalid_argument("read_pages: " + std::to_string(n) + " pages of " + std::to_string(page_bytes) +
                                    " bytes (at least one page, 16-byte aligned and sized)");
    const size_t per_page = page_bytes / 16, per_pool = per_page * size_t(n);
    if (2 * per_pool + 4 * size_t(kReadBlocks) * kReadThreads > 0xffffffffu)
        throw std::invalid_argument("read_pages: " + std::to_string(2 * per_pool * 16) + " bytes is past its 32-bit chunk count");
    read_pages_kernel<<<kReadBlocks, kReadThreads>>>(static_cast<const uint4*>(k), static_cast<const uint4*>(v), pages,
                                                     unsigned(per_pool), unsigned(per_page), read_sink());
    CUDA_CHECK_LAUNCH();
}

void flush_l2_clean(const void* p, size_t bytes, cudaStream_t stream) { read_all<false>("flush_l2_clean", p, bytes, stream); }

}  // namespace attn
