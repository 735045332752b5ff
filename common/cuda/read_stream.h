// read_stream.h — the ceiling of a kernel that only reads: every byte of a buffer read once, as fast as the GPU streams.
//   Built into every benchmark by the Makefile (common/cuda/read_stream.cu). A decode reads its K and V and writes almost
//   nothing, so beside a copy of the same bytes (read + written) its benchmark times this: at a few hundred MB a copy's
//   fixed costs are half as heavy per byte as a read's, and the share of a copy a read-only kernel can reach falls below
//   90 % (docs/perf.md, "MQA at 134 MB: what a kernel that only reads can reach").
#pragma once
#include <cstddef>

namespace attn {

// Reads `bytes` (a multiple of 16, 16-byte aligned) from device memory at `p` on stream 0, a grid-stride loop with
// four 16-byte loads in flight a thread, streaming past the caches; writes nothing the caller sees.
void read_stream(const void* p, size_t bytes);

}  // namespace attn
