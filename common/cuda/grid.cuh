// grid.cuh — a grid over B·H heads with no limit the hardware does not impose.
//
// gridDim.x may reach 2³¹ − 1 blocks, but gridDim.y and gridDim.z stop at 65535: a kernel that puts
// B·H in gridDim.y fails with cudaErrorInvalidValue ("invalid argument") at B = 70, H = 1000. Here the
// heads are spread over y and z: head = blockIdx.y + gridDim.y·blockIdx.z. Up to 65535 heads this is
// exactly the grid (x, B·H); past that, z grows and the blocks past the last head return at once.
//
//   kernel<<<attn::grid_over_heads(row_tiles, B * H), threads>>>(…);
//   const long long bh = attn::head_of_block();  if (bh >= BH) return;   // in the kernel
#pragma once
#include <cuda_runtime.h>

namespace attn {

constexpr long long kMaxGridYZ = 65535;  // cudaDeviceProp::maxGridSize[1] and [2] on every GPU since Kepler

inline dim3 grid_over_heads(unsigned x, long long heads) {
    const long long h = heads < 1 ? 1 : heads, y = h < kMaxGridYZ ? h : kMaxGridYZ;
    return dim3(x, unsigned(y), unsigned((h + y - 1) / y));
}

#ifdef __CUDACC__  // the host half above is also compiled by g++ (the harness's unit tests)
__device__ __forceinline__ long long head_of_block() { return blockIdx.y + (long long)gridDim.y * blockIdx.z; }
#endif

}  // namespace attn
