"""Times torch's float32 SDPA backward (the math and the memory-efficient backends; TF32 off) at the shapes of
make bench-task4-backward, for the side-by-side table of docs/perf.md (Task 4's backward bonus, 4c), and measures how
far torch's own float32 gradients are from float64 on one head (max |diff|, relative L2 over dQ, dK and dV, and the
largest share of the tolerance of task4/README.md, which is set against it).
Backward FLOPs = 2.5 × 4·B·H·S²·D (halved when causal); only the backward is timed (torch.autograd.grad on a graph kept
from one forward), CUDA events around it, L2 flushed before it, warm-up, median. The math backend materialises the
B·H·S² scores (and more): where a batch does not fit, it runs at the largest B that does (halving from the asked B)
and says so; TFLOP/s are per the batch that ran.
Run on the GPU in the same session as the benchmark:  python3 tools/vs_torch/sdpa_backward.py [--quick]"""
import gc
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from sdpa_bf16 import time_ms  # events around one call, L2 flushed before it, warm-up, median

ATOL, RTOL = 2e-5, 1e-4  # the tests' tolerance (task4/README.md)


def grads64(q, k, v, g, causal):
    """One head's gradients in float64, the definitions written out (bottom-right causal mask; Sq == Sk here)."""
    q, k, v = (t.double().requires_grad_() for t in (q, k, v))
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.triu(torch.ones_like(s, dtype=torch.bool), 1), float("-inf"))
    (torch.softmax(s, -1) @ v).backward(g.double())
    return q.grad, k.grad, v.grad


def run(backend, B, H, S, D, causal, flush, big):
    q, k, v = (torch.randn(B, H, S, D, device="cuda", requires_grad=True) for _ in range(3))
    g = torch.randn(B, H, S, D, device="cuda")
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        fn = lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
        grads = fn()
        torch.cuda.synchronize()
        want = grads64(q[0, 0].detach(), k[0, 0].detach(), v[0, 0].detach(), g[0, 0], causal)
        share = max(((a[0, 0].double() - w).abs() / (ATOL + RTOL * w.abs())).max().item() for a, w in zip(grads, want))
        worst = max((a[0, 0].double() - w).abs().max().item() for a, w in zip(grads, want))
        # relative L2 over dQ, dK and dV together (as task4_backward/ladder/bench_backward_tf32.cpp gives the kernels')
        rel = math.sqrt(sum(((a[0, 0].double() - w) ** 2).sum().item() for a, w in zip(grads, want)) /
                        sum((w ** 2).sum().item() for w in want))
        del grads
        n = 3 if big else 20
        ms = time_ms(fn, flush, 1 if big else 3, n)
    return ms, n, worst, share, rel


def main():
    quick = "--quick" in sys.argv
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.cuda.get_device_properties(0)
    print(f"GPU: {dev.name}, torch {torch.__version__}; float32, TF32 off; backward FLOPs = 2.5 x 4*B*H*S^2*D (halved causal)")
    flush = torch.empty(2 * 64 << 20, dtype=torch.uint8, device="cuda")  # twice a 50-60 MB L2
    shapes = [(4, 32, 128, 128)] + ([] if quick else [(64, 32, 4096, 128)])
    for B0, H, S, D in shapes:
        for causal in (False, True):
            print(f"\nB={B0} H={H} S={S} D={D}{' causal' if causal else ''}")
            for name, be in (("math", SDPBackend.MATH), ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
                B, result = B0, None
                while B >= 1 and result is None:
                    try:
                        result = run(be, B, H, S, D, causal, flush, S >= 4096)
                    except torch.OutOfMemoryError:
                        B //= 2
                    except RuntimeError as e:
                        print(f"  torch sdpa {name:<10} not available: {str(e).splitlines()[0][:120]}")
                        break
                    gc.collect()
                    torch.cuda.empty_cache()  # what a batch too large left behind
                if result is not None:
                    ms, n, worst, share, rel = result
                    flops = 2.5 * 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
                    ran = "" if B == B0 else f"  (at B={B}: B={B0} does not fit)"
                    print(f"  torch sdpa {name:<10} backward {ms:9.3f} ms (n={n})  {flops / ms / 1e9:6.2f} TFLOP/s   "
                          f"head 0 vs float64: max|diff| {worst:.1e}, rel L2 {rel:.1e}, {100 * share:.0f}% of the tests' tolerance{ran}",
                          flush=True)
                elif B < 1:
                    print(f"  torch sdpa {name:<10} does not fit even at B=1")
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
