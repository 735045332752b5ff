// bench.h — timing GPU work honestly, and saying what the time means.
//
// Bencher::time: warm-ups first; before every timed call an optional untimed `prepare` (fresh
// inputs, poisoning) and an L2 flush (a read of twice the L2 size, which leaves no dirty line for the call to write
// back: read_stream.h); CUDA events around the call
// with the device synchronised before the stop event, so work the call left on any stream —
// a side stream included — is inside the time; median and min over the repeats. With
// BenchOptions::overlap_host the call's host work is hidden instead, as the torch scripts hide it
// (tools/vs_torch/event_timing.py): the GPU zeroes a buffer (gpu_wait.h) while the call's launches queue, then flushes,
// so only GPU time falls between the events (ATTNLAB_TIMING_HIDE_HOST=0: no wait, host work past the flush counted).
// Ceilings are measured on the GPU in the same process: copy bandwidth (device-to-device, bytes
// read + written) and cuBLAS fp32 SGEMM; perf_line() puts every time against them.
#pragma once
#include <cstdio>
#include <functional>
#include <string>

#include "common/cuda/device.h"

namespace attn {

struct Timing {
    double median_ms = 0, min_ms = 0;
    int reps = 0;
};

struct BenchOptions {
    int warmup = 3;
    int reps = 20;
    bool flush_l2 = true;
    // false: the device is synchronised before the start event and before the stop event, so the call's host work
    // (argument checks, planning, launches) and work it left on any stream are inside the time. true: as torch's
    // scripts time a call (tools/vs_torch/event_timing.py): a GPU wait (gpu_wait.h) and the flush are queued, then start, the
    // call, stop, with no synchronisation between them, so the call's host work is done while the GPU waits and only
    // stream-ordered GPU work is timed.
    bool overlap_host = false;
};

// How overlap_host timed, for a benchmark's header line.
const char* overlap_timing_words();

class Bencher {
public:
    Bencher();
    ~Bencher();
    // prepare: before each call, untimed (fresh inputs). check: after each call, untimed (every
    // timed call's output verified, not only the last).
    Timing time(const std::function<void()>& fn, BenchOptions opt = {}, const std::function<void()>& prepare = {},
                const std::function<void()>& check = {});

private:
    DeviceBuffer<char> flush_;
    cudaEvent_t start_{}, stop_{};
};

struct Ceilings {
    double copy_gbps = 0;      // device-to-device copy, (read + write) bytes / s
    double sgemm_tflops = 0;   // cuBLAS fp32 SGEMM 8192³, TF32 off
};
Ceilings measure_ceilings(Bencher& b);

// The frame of every benchmark program: without a GPU it prints "skipped: no CUDA device (…)" and
// returns 77; otherwise it measures the ceilings, prints the GPU line to `out`, runs `body`, and
// turns an exception into one line on stderr and exit code 1.
struct BenchContext {
    DeviceInfo device;
    Bencher& bencher;
    Ceilings ceilings;
};
int run_benchmark(const char* program, FILE* out, const std::function<void(BenchContext&)>& body);

// "name   0.123 ms (min 0.120, n=20)   12.3 TFLOP/s = 24% of SGEMM   345 GB/s = 8% of copy"
// flops or bytes may be 0 to leave that column out.
std::string perf_line(const std::string& name, const Timing& t, double flops, double bytes, const Ceilings& c);

}  // namespace attn
