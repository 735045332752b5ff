// read_stream.h — the ceiling of a kernel that only reads: every byte of a buffer read once, as fast as the GPU streams.
//   Built into every benchmark by the Makefile (common/cuda/read_stream.cu). A decode reads its K and V and writes almost
//   nothing, so beside a copy of the same bytes (read + written) its benchmark times this: a copy's fixed costs are half
//   as heavy per byte as a read's, so at 134 MB a read-only kernel reaches 96–97 % of a copy on an H200, 104–105 % from
//   0.5 GB up (with the L2 flushed clean, l2_flush.h; docs/perf.md, "The L2 flush: clean, not dirty").
#pragma once
#include <cstddef>

namespace attn {

// Reads `bytes` (a multiple of 16, 16-byte aligned) from device memory at `p` on stream 0, a grid-stride loop with
// four 16-byte loads in flight a thread, streaming past the caches; writes nothing the caller sees.
void read_stream(const void* p, size_t bytes);

}  // namespace attn
