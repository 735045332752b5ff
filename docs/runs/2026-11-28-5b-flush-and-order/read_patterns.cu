// read_patterns.cu — a diagnostic: how fast N bytes are read in different orders, and what the L2 flush before each
// timed call costs a read, against a copy of the same bytes timed the same way.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 read_patterns.cu -o read_patterns && ./read_patterns
// Flushes: write (a memset of 2 × L2, as common/cuda/bench.cpp does: L2 left full of dirty lines), read (plain loads of
// the same buffer: L2 left full of clean lines), both (the memset, then the read).
// Orders (each a kernel that XORs what it loads, 16-byte loads, 16 in flight a thread):
//   grid    — grid-stride over the whole buffer (2,048 blocks of 512, four loads in flight: common/cuda/read_stream.cu)
//   blocks  — nb blocks of 128, each reading its own contiguous share (as a decode's pieces read their keys)
//   groupsP — nb blocks of 128 in groups of P; each group owns a contiguous share, its blocks taking its 32 KB chunks
//             in turn (chunk j to block j mod P): P pieces of one sequence walking it side by side
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                       \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));           \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

__global__ void read_grid(const uint4* p, size_t n, unsigned* sink) {
    unsigned acc = 0;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) acc ^= __ldcs(p + i).x;
    if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;
}

// Chunks of 32 KB (128 threads × 16 loads of 16 B). Block b of group G = b / P, lane j = b % P: chunks
// G·per_group + j, + P, + 2P, … of its group's per_group chunks.
__global__ void read_groups(const uint4* p, size_t chunks, int P, unsigned* sink) {
    constexpr int kLoads = 16;
    const int groups = gridDim.x / P, G = blockIdx.x / P, j = blockIdx.x % P;
    const size_t per_group = (chunks + groups - 1) / groups, c0 = G * per_group, c1 = c0 + per_group < chunks ? c0 + per_group : chunks;
    unsigned acc = 0;
    for (size_t c = c0 + j; c < c1; c += P) {
        const uint4* q = p + c * (128 * kLoads) + threadIdx.x;
        uint4 x[kLoads];
#pragma unroll
        for (int u = 0; u < kLoads; ++u) x[u] = __ldcs(q + u * 128);
#pragma unroll
        for (int u = 0; u < kLoads; ++u) acc ^= x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
    }
    if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;
}

__global__ void flush_read(const uint4* p, size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) acc ^= __ldcg(p + i).x;
    if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const size_t flush_bytes = 2 * size_t(prop.l2CacheSize);
    std::printf("GPU: %s, %d SMs, L2 %d MB; flush buffer %zu MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
                flush_bytes >> 20);
    const size_t max_bytes = size_t(1) << 30;
    char *src, *dst, *flush;
    unsigned* sink;
    CK(cudaMalloc(&src, max_bytes));
    CK(cudaMalloc(&dst, max_bytes));
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaMemset(src, 1, max_bytes));
    CK(cudaMemset(flush, 2, flush_bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    auto time = [&](const std::string& flush_mode, auto&& fn) {
        std::vector<float> ms;
        for (int i = 0; i < 23; ++i) {
            if (flush_mode != "read") CK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
            if (flush_mode != "write") flush_read<<<2048, 512>>>(reinterpret_cast<const uint4*>(flush), flush_bytes / 16, sink);
            CK(cudaEventRecord(e0));
            fn();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float t;
            CK(cudaEventElapsedTime(&t, e0, e1));
            if (i >= 3) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        return 0.5 * (ms[9] + ms[10]);
    };
    for (size_t mb : {34, 134, 537}) {
        const size_t bytes = mb << 20;
        for (const std::string flush_mode : {"write", "read", "both"}) {
            const double copy = time(flush_mode, [&] { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
            const double copy_gbps = 2.0 * bytes / (copy * 1e6);
            std::printf("%4zu MB flush=%-5s copy %.4f ms (%.0f GB/s, read + written)\n", mb, flush_mode.c_str(), copy, copy_gbps);
            auto report = [&](const std::string& what, double t) {
                std::printf("%4zu MB flush=%-5s %-22s %.4f ms  %6.0f GB/s = %5.1f%% of the copy\n", mb, flush_mode.c_str(), what.c_str(),
                            t, bytes / (t * 1e6), 100.0 * bytes / (t * 1e6) / copy_gbps);
            };
            report("grid 2048x512", time(flush_mode, [&] { read_grid<<<2048, 512>>>(reinterpret_cast<const uint4*>(src), bytes / 16, sink); }));
            const size_t chunks = bytes / (32 << 10);
            for (int nb : {256, 528, 1056})
                for (int P : {1, 2, 4, 8, 16, 32})
                    report("blocks " + std::to_string(nb) + " P=" + std::to_string(P), time(flush_mode, [&] {
                               read_groups<<<nb - nb % P, 128>>>(reinterpret_cast<const uint4*>(src), chunks, P, sink);
                           }));
        }
    }
    CK(cudaGetLastError());
    return 0;
}
