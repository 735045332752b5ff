"""How the torch comparison scripts time a call, the way the C++ benchmarks do (common/cuda/bench.h): warm-ups, then
per repetition an L2 flush (reading `flush`, a buffer twice the L2, which leaves the L2 clean: zeroing it left dirty
lines that the call then wrote back, 8-10 us of a 134 MB read on an H200, common/cuda/read_stream.h), CUDA events around
the call, the median.

Only the GPU's time is timed, not the host's. Each repetition first gives the GPU about a millisecond of other work
(zeroing a 4 GiB buffer), then the flush, so that the call's host work (Python, torch's dispatch, a library's own Python
interface) is queued while the GPU is busy. Without it, a call whose host work outlasts the flush leaves the GPU idle
after the start event, and that idle time was counted against the library: FlashAttention-4's backward at
B = 4, H = 16, S = 4,096, D = 128 timed 543 TFLOP/s so and 618 with the wait (an H100; docs/perf.md, "GPU time only").
Why a memset and not torch.cuda._sleep: after a one-thread spin of 1 ms, short calls (~0.2 ms) timed ~1 % slower than
with no wait at all; after the memset, as fast (bench_task4_bf16 at S = 1,024, the C++ side of the same timing,
common/cuda/bench.h). Why before the flush: the call then starts right behind the flush, as in a synchronised timing.
ATTNLAB_TIMING_HIDE_HOST=0 times the old way (host work past the flush counted).
"""
import os
import statistics

import torch

WAIT_BYTES = 4 << 30  # ~1.3 ms of zeroing at 3 TB/s (H100), ~0.9 ms at 4.8 TB/s (H200): more than the host work measured
_wait = None


def _wait_buffer():
    global _wait
    if _wait is None:
        _wait = torch.empty(WAIT_BYTES, dtype=torch.uint8, device="cuda")
    return _wait


def hide_host_default():
    """On unless ATTNLAB_TIMING_HIDE_HOST=0."""
    return os.environ.get("ATTNLAB_TIMING_HIDE_HOST", "1") != "0"


def flush_l2(flush):
    """Reads every line of `flush` (a buffer of 4-byte elements, twice the L2): the L2 is left holding clean lines of no
    timed call's, the lines it held before written back during the flush, not during the call."""
    flush.view(torch.int32).amax()


def time_ms(fn, flush, warmup=3, reps=10, hide_host=None):
    hide = hide_host_default() if hide_host is None else hide_host
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        if hide:
            _wait_buffer().zero_()  # the GPU is busy here while fn's host work queues its kernels
        flush_l2(flush)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def timing_words():
    """How the times were taken, for the scripts' header lines."""
    if hide_host_default():
        return "GPU time only (host work queued behind a GPU wait)"
    return "host work past the flush counted (ATTNLAB_TIMING_HIDE_HOST=0)"
