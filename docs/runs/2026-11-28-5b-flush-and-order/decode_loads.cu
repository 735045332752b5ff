// decode_loads.cu — a diagnostic: the decode's loads alone (5b's MQA row: B = 64, one KV head, L = 4,096, D = 128,
// bf16: 134 MB), without its arithmetic, in the decode's own pipeline, to see what caps MQA's rate.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 decode_loads.cu -o decode_loads && ./decode_loads
// K and V are two arrays of 64 MB. R regions (a sequence's piece) of each; a block streams its region's K and V in
// tiles of 64 rows × 256 bytes (16 KB of each a tile) with cp.async, 128 threads, STAGES − 1 tiles ahead, a
// cp.async.wait_group and a __syncthreads a tile, as task5_paged/reference/paged_decode.cu does. T = 2: two blocks
// side by side read the same region (the reference's two 16-row blocks of MQA's 32 query heads). Timed with a clean L2
// (a read of 2 × L2 before each call) and with a dirty one (a memset), against a copy of the same bytes.
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

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

constexpr int kTileBytes = 64 * 256;  // of K, and of V

template <int STAGES>
__global__ void __launch_bounds__(128) stream_tiles(const char* K, const char* V, size_t region_bytes, int T, unsigned* sink) {
    extern __shared__ __align__(128) unsigned char smem[];
    const int region = blockIdx.x / T, tid = threadIdx.x;
    const char* k = K + region * region_bytes;
    const char* v = V + region * region_bytes;
    const int tiles = int(region_bytes / kTileBytes);
    const unsigned base = unsigned(__cvta_generic_to_shared(smem));
    auto load = [&](int stage, int t) {
        const unsigned at = base + stage * 2 * kTileBytes;
#pragma unroll
        for (int i = 0; i < kTileBytes / 16 / 128; ++i) {  // 8 chunks of K and 8 of V a thread
            const int c = i * 128 + tid;
            cp_async16(at + c * 16, k + size_t(t) * kTileBytes + c * 16);
            cp_async16(at + kTileBytes + c * 16, v + size_t(t) * kTileBytes + c * 16);
        }
    };
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load(s, s);
        commit();
    }
    unsigned acc = 0;
    for (int t = 0; t < tiles; ++t) {
        wait_group<STAGES - 2>();
        __syncthreads();
        if (t + STAGES - 1 < tiles) load((t + STAGES - 1) % STAGES, t + STAGES - 1);
        commit();
        acc ^= reinterpret_cast<const unsigned*>(smem + (t % STAGES) * 2 * kTileBytes)[tid];
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
    const size_t flush_bytes = 2 * size_t(prop.l2CacheSize), half = size_t(64) << 20, bytes = 2 * half;
    std::printf("GPU: %s, %d SMs, L2 %d MB; K and V %zu MB each\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
                half >> 20);
    char *K, *V, *dst, *flush;
    unsigned* sink;
    CK(cudaMalloc(&K, half));
    CK(cudaMalloc(&V, half));
    CK(cudaMalloc(&dst, bytes));
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaMemset(K, 1, half));
    CK(cudaMemset(V, 1, half));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto time = [&](bool clean, auto&& fn) {
        std::vector<float> ms;
        for (int i = 0; i < 23; ++i) {
            if (clean) flush_read<<<2048, 512>>>(reinterpret_cast<const uint4*>(flush), flush_bytes / 16, sink);
            else CK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
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
    auto set_smem = [](auto kernel, int stages) {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, stages * 2 * kTileBytes + 4096));
        int n = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, 128, stages * 2 * kTileBytes + 4096));
        return n;
    };
    const int per_sm[7] = {0, 0, set_smem(stream_tiles<2>, 2), set_smem(stream_tiles<3>, 3), set_smem(stream_tiles<4>, 4), 0,
                           set_smem(stream_tiles<6>, 6)};
    for (bool clean : {true, false}) {
        const double copy = time(clean, [&] {
            CK(cudaMemcpyAsync(dst, K, half, cudaMemcpyDeviceToDevice));
            CK(cudaMemcpyAsync(dst + half, V, half, cudaMemcpyDeviceToDevice));
        });
        const double copy_gbps = 2.0 * bytes / (copy * 1e6);
        std::printf("flush=%s  copy of the 134 MB: %.4f ms (%.0f GB/s, read + written)\n", clean ? "clean" : "dirty", copy, copy_gbps);
        struct Config { int R, T, S; };
        for (Config c : {Config{128, 2, 3}, Config{128, 1, 3}, Config{256, 1, 3}, Config{264, 1, 3}, Config{256, 2, 3},
                         Config{512, 1, 3}, Config{528, 1, 2}, Config{264, 1, 2}, Config{132, 1, 6}, Config{132, 1, 4},
                         Config{128, 2, 4}, Config{256, 1, 4}}) {
            const size_t region = half / c.R / kTileBytes * kTileBytes;  // whole tiles (a few rows short of 64 MB at R = 264)
            const double read = 2.0 * region * c.R;
            auto run = [&] {
                const int smem = c.S * 2 * kTileBytes + 4096;
                if (c.S == 2) stream_tiles<2><<<c.R * c.T, 128, smem>>>(K, V, region, c.T, sink);
                if (c.S == 3) stream_tiles<3><<<c.R * c.T, 128, smem>>>(K, V, region, c.T, sink);
                if (c.S == 4) stream_tiles<4><<<c.R * c.T, 128, smem>>>(K, V, region, c.T, sink);
                if (c.S == 6) stream_tiles<6><<<c.R * c.T, 128, smem>>>(K, V, region, c.T, sink);
            };
            const double t = time(clean, run);
            std::printf("flush=%s  regions %3d × twins %d, %d stages (%d blocks, %d an SM)  %.4f ms  %6.0f GB/s = %5.1f%% of the copy\n",
                        clean ? "clean" : "dirty", c.R, c.T, c.S, c.R * c.T, per_sm[c.S], t, read / (t * 1e6),
                        100.0 * read / (t * 1e6) / copy_gbps);
        }
    }
    CK(cudaGetLastError());
    return 0;
}
