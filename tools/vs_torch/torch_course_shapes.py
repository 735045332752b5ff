#!/usr/bin/env python3
"""torch's fp32 SDPA backends at the course's Task-4 shapes (32 heads of 128), for docs/perf.md. Runs on a GPU
machine with a CUDA torch.

Default timing: the way the project's Bencher times (events, L2 flushed, the device synchronised before the stop
event, median). Where a backend cannot run whole (math at B=64, S=4096 needs 137 GB of scores) it runs over slices
of 64 heads and the summed time is reported, as bench_task4 does for its baselines.

--stream: the method of `ladder_task4 --top`'s "stream ms" column, for a side-by-side reading in one device call
(docs/perf.md): CUDA events recorded on the stream around one call, behind a 512 MB write that flushes L2 and
covers the host's launch (Python's dispatch included), no host synchronisation between them; median. The
efficient backend then runs whole at every shape (one call), math in slices of 64 heads where it must.
--accuracy: each backend's output against attention in float64 on the same inputs, as ladder_task4 --top measures
the project's kernels: max |diff| and relative L2; every row at S=128, 8 heads from the middle at every 32nd row
(row x·32 + x mod 32) at S=4096.
"""
import argparse
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from event_timing import flush_l2  # the L2 emptied and left clean, as every benchmark does

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def bench(fn, reps, flush, warm=2):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        flush_l2(flush)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); torch.cuda.synchronize(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


def bench_stream(fn, reps, flush, warm=2):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    evs = []
    for i in range(reps):
        flush.fill_(i & 0xff)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record()
        evs.append((s, e))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in evs)


def error_vs_f64(q, k, v, out, causal, heads, stride):
    """out [1, BH, S, D] against float64 attention on heads (a slice) at rows x·stride + x mod stride."""
    S = q.shape[2]
    rows = torch.tensor([x * stride + x % stride for x in range((S + stride - 1) // stride) if x * stride + x % stride < S],
                        device=q.device)
    q64, k64, v64 = (t[:, heads].double() for t in (q, k, v))
    s = (q64[:, :, rows] @ k64.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        keys = torch.arange(S, device=q.device)
        s = s.masked_fill(keys[None, :] > rows[:, None] + (k.shape[2] - S), float("-inf"))
    want = torch.softmax(s, dim=-1) @ v64
    diff = out[:, heads][:, :, rows].double() - want
    return diff.abs().max().item(), (diff.norm() / want.norm()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stream", action="store_true", help="the stream method (see the docstring)")
    ap.add_argument("--accuracy", action="store_true", help="max |diff| and relative L2 against float64")
    ap.add_argument("--only-b4", action="store_true", help="skip B=64 S=4096")
    args = ap.parse_args()
    flush = torch.empty((512 if args.stream else 256) * 1024 * 1024 // 4, device="cuda")
    timer = bench_stream if args.stream else bench
    print("device", torch.cuda.get_device_name(), "torch", torch.__version__,
          "timing:", "stream events behind a 512 MB flush" if args.stream else "events, synchronised, L2 flushed",
          flush=True)
    shapes = ((4, 128), (64, 4096)) if not args.only_b4 else ((4, 128),)
    for B, S in shapes:
        H, D = 32, 128
        torch.manual_seed(0)
        q, k, v = (torch.randn(1, B * H, S, D, device="cuda") for _ in range(3))  # 4-D, as SDPA's kernels want
        for causal in (False, True):
            flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
            row = f"B={B} H={H} S={S} D={D}{' causal' if causal else ''}:"
            for name, be in (("math", SDPBackend.MATH), ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
                heads = B * H if S <= 1024 or (args.stream and name == "efficient") else 64
                out = None

                def run(store=False):
                    for h0 in range(0, B * H, heads):
                        r = F.scaled_dot_product_attention(q[:, h0:h0 + heads], k[:, h0:h0 + heads], v[:, h0:h0 + heads],
                                                           is_causal=causal)
                        if store:
                            out[:, h0:h0 + heads] = r
                try:
                    with sdpa_kernel(be):
                        ms = timer(run, reps=50 if S <= 1024 else 3, flush=flush)
                    sliced = f" ({B * H // heads} slices)" if heads < B * H else ""
                    row += f"  {name} {ms:.{4 if ms < 1 else 3}f} ms{sliced} = {flops / ms / 1e9:.1f} TFLOP/s"
                    if args.accuracy:
                        out = torch.empty_like(q)
                        with sdpa_kernel(be):
                            run(store=True)
                        mid = slice(B * H // 2 - 4, B * H // 2 + 4) if S > 1024 else slice(0, B * H)
                        mx, rel = error_vs_f64(q, k, v, out, causal, mid, 32 if S > 1024 else 1)
                        row += f" [vs f64: max {mx:.1e}, rel L2 {rel:.1e}]"
                except Exception as ex:
                    row += f"  {name} failed: {type(ex).__name__}: {str(ex)[:80]}"
                del out
                torch.cuda.empty_cache()
            print(row, flush=True)
        del q, k, v
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
