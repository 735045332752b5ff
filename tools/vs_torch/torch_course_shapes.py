#!/usr/bin/env python3
"""torch's fp32 SDPA backends at the course's Task-4 shapes (32 heads of 128), timed the way the
project's benchmarks time (events, L2 flushed, median), for docs/perf.md. Runs on a GPU machine with
a CUDA torch. Where a backend cannot run whole (math at B=64, S=4096 needs 137 GB of scores) it runs
over slices of 64 heads and the summed time is reported, as bench_task4 does for its baselines.
"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

torch.backends.cuda.matmul.allow_tf32 = False
flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")


def bench(fn, reps, warm=2):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); torch.cuda.synchronize(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


print("device", torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
for B, S in ((4, 128), (64, 4096)):
    H, D = 32, 128
    q, k, v = (torch.randn(1, B * H, S, D, device="cuda") for _ in range(3))  # 4-D, as SDPA's kernels want
    for causal in (False, True):
        flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
        row = f"B={B} H={H} S={S} D={D}{' causal' if causal else ''}:"
        for name, be in (("math", SDPBackend.MATH), ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
            heads = B * H if S <= 1024 else 64
            def run():
                for h0 in range(0, B * H, heads):
                    F.scaled_dot_product_attention(q[:, h0:h0 + heads], k[:, h0:h0 + heads], v[:, h0:h0 + heads],
                                                   is_causal=causal)
            try:
                with sdpa_kernel(be):
                    ms = bench(run, reps=20 if S <= 1024 else 3)
                sliced = f" ({B * H // heads} slices)" if heads < B * H else ""
                row += f"  {name} {ms:.3f} ms{sliced} = {flops / ms / 1e9:.1f} TFLOP/s"
            except Exception as ex:
                row += f"  {name} failed: {type(ex).__name__}"
            torch.cuda.empty_cache()
        print(row, flush=True)
    del q, k, v
    torch.cuda.empty_cache()
