// cluster_occupancy.cu — a diagnostic: how many blocks of 5b's decode shape (128 threads, 102,400 bytes of dynamic
// shared memory: three stages at D = 128, two blocks an SM) run at once when launched as clusters of 1, 2, 4 and 8.
// Asks cudaOccupancyMaxActiveClusters, and times 256 and 264 blocks that each wait 20 µs (%globaltimer): one wave
// takes about 20 µs, two about 40.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 cluster_occupancy.cu -o cluster_occupancy && ./cluster_occupancy
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                       \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));           \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

__device__ unsigned long long now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void __launch_bounds__(128) wait_20us(int* sink) {
    extern __shared__ int smem[];
    const unsigned long long t0 = now();
    while (now() - t0 < 20000) {
    }
    smem[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (smem[127 - threadIdx.x] == -1) sink[blockIdx.x] = 1;
}

int main() {
    const int smem = 102400;
    CK(cudaFuncSetAttribute(wait_20us, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wait_20us, 128, smem));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::printf("%d SMs, %d blocks an SM: %d slots\n", sms, per_sm, sms * per_sm);
    int* sink;
    CK(cudaMalloc(&sink, 1 << 20));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int cluster : {1, 2, 4, 8}) {
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = cluster, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg{};
        cfg.blockDim = dim3(128), cfg.dynamicSmemBytes = smem, cfg.attrs = &attr, cfg.numAttrs = 1;
        cfg.gridDim = dim3(256);
        int clusters = 0;
        CK(cudaOccupancyMaxActiveClusters(&clusters, wait_20us, &cfg));
        for (int blocks : {128, 256, 264}) {
            if (blocks % cluster) continue;
            cfg.gridDim = dim3(blocks);
            float best = 1e9;
            for (int i = 0; i < 10; ++i) {
                CK(cudaEventRecord(e0));
                CK(cudaLaunchKernelEx(&cfg, wait_20us, sink));
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (ms < best) best = ms;
            }
            std::printf("clusters of %d: at most %d clusters (%d blocks) at once; %d blocks of 20 µs took %.1f µs\n", cluster,
                        clusters, clusters * cluster, blocks, 1000 * best);
        }
    }
    return 0;
}
