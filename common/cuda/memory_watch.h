// memory_watch.h — device memory used while something runs, seen from this process: the whole
// GPU's used bytes (another process's allocations included), sampled on a thread.
#pragma once
#include <functional>

namespace attn {

// Runs fn() and returns the peak of the device's used memory during it, minus the used memory
// just before it (bytes). Sampled every ~100 µs: an allocation that lives as long as a kernel
// that uses it is seen.
double device_memory_peak_during(const std::function<void()>& fn);

// Waits (at most 10 s) until the device's used memory stops changing: a process that just ended
// gives its memory back asynchronously, and a window opened before then would see it fall.
void wait_for_device_memory_to_settle();

// The memory a fresh runner takes for `calls` beyond what the null runner (the harness with a submission that does
// nothing) takes for the same calls, from before each starts — its CUDA context, its constructors and the calls: on the
// device (the GPU's used memory) and on the host (the runner's peak resident memory). `calls` runs twice, the null
// runner's first; `between` runs between the two (re-poison the outputs). `ms`: the submission's run, wall clock.
struct RunnerMemory {
    double device_bytes, host_bytes, ms;
};
RunnerMemory runner_memory_beyond_null(const std::function<void()>& calls, const std::function<void()>& between);

}  // namespace attn
