"""How the torch comparison scripts time a call, the way the C++ benchmarks do (common/cuda/bench.h): warm-ups, then
per repetition an L2 flush (zeroing `flush`, a buffer larger than the L2), CUDA events around the call, the median.

Only the GPU's time is timed, not the host's. Before the start event the GPU is given about a millisecond of waiting
(torch.cuda._sleep) after the flush, so that the call's host work (Python, torch's dispatch, a library's own Python
interface) is queued while the GPU is busy. Without it, a call whose host work outlasts the flush (on an H100 about
45 µs for sdpa_bf16.py's 128 MB, 90 µs for sdpa_bf16_backward.py's 256 MB) leaves the GPU idle after the start event,
and that idle time is counted against the library: at S = 1024, where a call takes 0.2–0.4 ms, tens of µs matter (how
much it was has not been measured). ATTNLAB_TIMING_HIDE_HOST=0 times the old way (host work past the flush counted).
"""
import os
import statistics

import torch

SLEEP_CYCLES = 2_000_000  # ~1 ms at 1.6–2 GHz: longer than any library's host work per call measured here


def hide_host_default():
    """On unless ATTNLAB_TIMING_HIDE_HOST=0, or where this torch has no torch.cuda._sleep (then said in the header)."""
    return os.environ.get("ATTNLAB_TIMING_HIDE_HOST", "1") != "0" and hasattr(torch.cuda, "_sleep")


def time_ms(fn, flush, warmup=3, reps=10, hide_host=None):
    hide = hide_host_default() if hide_host is None else hide_host
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        if hide:
            torch.cuda._sleep(SLEEP_CYCLES)  # the GPU waits here while fn's host work queues its kernels
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
    why = "ATTNLAB_TIMING_HIDE_HOST=0" if hasattr(torch.cuda, "_sleep") else "this torch has no torch.cuda._sleep"
    return f"host work past the flush counted ({why})"
