// stream_scratch.h — scratch memory for a call's helper kernels (a backward's row term, its dQ accumulator),
// allocated and freed in stream order on the default stream (no synchronisation), from a pool that keeps its memory
// between calls: the default pool gives its memory back to the driver at every synchronisation and maps it again on
// the next call, which made 4c's reference take 0.226 ms a call instead of 0.130 ms at B=4 H=32 S=128 (H100,
// task4_backward/README.md).
//   attn::StreamScratch delta(n);   kernel<<<…>>>(delta.p, …);   // freed (cudaFreeAsync) at the end of the scope
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"  // KeptPool

namespace attn {

// The scratch's pool: a KeptPool (device.h), made at the first call.
inline cudaMemPool_t keeping_pool() {
    static const KeptPool pool;
    return pool.get();
}

// n floats on the default stream's order (none, p null, when n is 0).
struct StreamScratch {
    float* p = nullptr;
    explicit StreamScratch(size_t n) {
        if (n) CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p), n * sizeof(float), keeping_pool(), 0));
    }
    ~StreamScratch() {
        if (p) cudaFreeAsync(p, 0);
    }
    StreamScratch(const StreamScratch&) = delete;
    StreamScratch& operator=(const StreamScratch&) = delete;
};

}  // namespace attn
