// gpu_wait.h — keep the GPU busy for a while: the benchmarks' way to let a call's host work queue its launches while
// the GPU still has work, so that only GPU time falls between the events (bench.h's overlap_host, as
// tools/vs_torch/event_timing.py does for torch's libraries).
#pragma once
#include <cuda_runtime.h>

namespace attn {

// Zeroes a 1 GiB buffer of its own on the stream (~0.35 ms at 3 TB/s; allocated at the first call). Memory traffic, not
// a spinning thread: after a 1 ms one-thread spin, calls of ~0.2 ms timed ~1 % slower than with no wait at all, after
// the memset as fast (bench_task4_bf16 at S = 1,024 on an H100; docs/perf.md, "GPU time only").
void gpu_wait(cudaStream_t stream = 0);

// On unless ATTNLAB_TIMING_HIDE_HOST=0 (the same knob as the torch scripts').
bool hide_host_behind_gpu_wait();

}  // namespace attn
