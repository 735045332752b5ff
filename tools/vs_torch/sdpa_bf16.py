"""Times torch's SDPA backends in bf16 (FlashAttention-2, cuDNN, memory-efficient), and FlashAttention-4 where
`flash-attn-4` is installed (tools/vs_torch/fa4.py), at the shapes of
make bench-task4-bf16 / ladder-task4-bf16, for the side-by-side table of docs/perf.md (Task 4's bf16 bonus).
FLOPs = 4·B·H·S²·D (halved when causal); CUDA events around each call, L2 flushed before it, warm-up, median.
Run on the GPU in the same session as the benchmark:  python3 tools/vs_torch/sdpa_bf16.py [--quick | --grid]
(--grid: the shapes of bench_task4_bf16 --grid, B·H·S·D = 16·16·1024·128 … 1·32·16384·64)"""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

import fa4
from event_timing import time_ms, timing_words


def main():
    quick = "--quick" in sys.argv
    dev = torch.cuda.get_device_properties(0)
    print(f"GPU: {dev.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    fa4_fn, status = fa4.load()
    print(status)
    print(f"timing: events, 128 MB L2 flush, median of 10 after 3; {timing_words()}")
    flush = torch.empty(2 * 64 << 20, dtype=torch.uint8, device="cuda")  # twice a 50-60 MB L2
    backends = [("flash (FA2)", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    g = torch.Generator(device="cuda").manual_seed(1)
    if "--grid" in sys.argv:  # bench_task4_bf16 --grid: issue 31's table, 16k or 64k tokens a batch
        shapes = [(16, 16, 1024, 128), (4, 16, 4096, 128), (1, 16, 16384, 128), (16, 32, 1024, 64), (4, 32, 4096, 64),
                  (1, 32, 16384, 64)]
    else:
        shapes = [(4, 16, S, D) for D in (128, 64) for S in (4096, 1024) if not quick or S == 1024]
    for B, H, S, D in shapes:
        for causal in (False, True):
            q, k, v = (torch.randn(B, H, S, D, device="cuda", generator=g).bfloat16() for _ in range(3))
            want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal) \
                if S <= 1024 else None
            flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
            print(f"\nB={B} H={H} S={S} D={D}{' causal' if causal else ''}")
            for name, be in backends:
                try:
                    with sdpa_kernel(be):
                        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        out = fn()
                        ms = time_ms(fn, flush)
                    err = "" if want is None else \
                        f"   rel L2 {((out.double() - want).norm() / want.norm()).item():.1e}"
                    print(f"  torch sdpa {name:<12} {ms:8.3f} ms  {flops / ms / 1e9:6.1f} TFLOP/s{err}")
                except RuntimeError as e:
                    print(f"  torch sdpa {name:<12} not available: {str(e).splitlines()[0][:100]}")
            if fa4_fn:
                qs, ks, vs = fa4.bshd(q, k, v)
                try:
                    fn = lambda: fa4.forward(fa4_fn, qs, ks, vs, causal)
                    out = fn().transpose(1, 2)
                    ms = time_ms(fn, flush)
                    err = "" if want is None else \
                        f"   rel L2 {((out.double() - want).norm() / want.norm()).item():.1e}"
                    print(f"  FA4 (CuTe)             {ms:8.3f} ms  {flops / ms / 1e9:6.1f} TFLOP/s{err}")
                except Exception as e:  # noqa: BLE001 — a shape FA4 refuses is said, not fatal
                    print(f"  FA4 (CuTe)             failed: {str(e).splitlines()[0][:100] if str(e) else type(e).__name__}")


if __name__ == "__main__":
    main()
