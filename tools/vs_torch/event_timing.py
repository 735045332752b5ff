"""How the torch comparison scripts time a call, the way the C++ benchmarks do (common/cuda/bench.h): warm-ups, then
per repetition an L2 flush (zeroing `flush`, a buffer larger than the L2), CUDA events around the call, the median."""
import statistics

import torch


def time_ms(fn, flush, warmup=3, reps=10):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)
