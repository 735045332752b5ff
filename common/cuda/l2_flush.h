// l2_flush.h — empty the L2 before a timed call, and leave it clean: the benchmarks' flush (bench.h; the torch scripts
// flush the same way, tools/vs_torch/event_timing.py).
//
// A flush by writing (a memset of twice the L2, as the benchmarks did until 2026-11-28) leaves the L2 full of dirty
// lines, and the timed call pays to write them back: on an H200 (60 MB of L2) a kernel that only reads 134 MB took
// 0.0395 ms after it against 0.0345 after this one, a copy of the same bytes 0.0702 against 0.0666, so a read-only kernel
// timed beside a copy reached 89 % of it instead of 97 % (docs/perf.md, "The L2 flush: clean, not dirty"). A call in a
// model follows kernels that mostly read (weights), not a memset. The grader's timed calls keep their memset
// (common/cuda/timed_calls.cpp): its credit is a ratio of two times taken alike, its stored reference times were taken so.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace attn {

// Reads `bytes` (a multiple of 16, 16-byte aligned; at least twice the L2) at `p` on `stream` with plain loads, so
// that every line the L2 held before is evicted, dirty ones written back, and the lines left are clean and belong to
// no timed call.
void flush_l2_clean(const void* p, size_t bytes, cudaStream_t stream = 0);

}  // namespace attn
