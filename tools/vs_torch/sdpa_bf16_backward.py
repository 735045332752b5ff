"""Times torch's bf16 attention backwards (SDPA's cuDNN and FlashAttention-2 backends, and FlashAttention-4's CuTe
kernels where `flash-attn-4` is installed: tools/vs_torch/fa4.py) at the shapes of
make bench-task4-bf16-backward, for the side-by-side table of docs/perf.md (Task 4's bf16 backward bonus, 4d).
The same method as the C++ benchmark: FLOPs = 2.5 × 4·B·H·S²·D (halved when causal); CUDA events around each
backward (torch.autograd.grad of a stored forward's output), a 256 MB L2 flush before it, 3 warm-ups, the median of 10.
Run on the GPU in the same session as the benchmark:  python3 tools/vs_torch/sdpa_bf16_backward.py [--quick]"""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

import fa4
from event_timing import time_ms, timing_words

SHAPES = [(16, 16, 1024, 128), (4, 16, 4096, 128), (1, 16, 16384, 128), (16, 32, 1024, 64), (4, 32, 4096, 64),
          (1, 32, 16384, 64)]
BACKENDS = [("cuDNN", SDPBackend.CUDNN_ATTENTION), ("FA2", SDPBackend.FLASH_ATTENTION)]
FA4, FA4_STATUS = fa4.load()


def main():
    quick = "--quick" in sys.argv
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    print(FA4_STATUS)
    print("backward TFLOP/s (2.5 x 4·B·H·S²·D, halved when causal); events, 256 MB L2 flush, median of 10 after 3; "
          + timing_words())
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    g = torch.Generator(device="cuda").manual_seed(2026)
    for B, H, S, D in SHAPES:
        if quick and S != 1024:
            continue
        for causal in (False, True):
            flops = 2.5 * 4 * B * H * S * S * D * (0.5 if causal else 1.0)
            q, k, v, dout = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(4))
            cells = []
            for name, backend in BACKENDS:
                qr, kr, vr = (t.detach().clone().requires_grad_() for t in (q, k, v))
                try:
                    with sdpa_kernel(backend):
                        o = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
                    ms = time_ms(lambda: torch.autograd.grad(o, (qr, kr, vr), dout, retain_graph=True), flush)
                    cells.append(f"{name} {ms:8.3f} ms {flops / ms / 1e9:6.1f} TFLOP/s")
                except RuntimeError as e:
                    cells.append(f"{name} not available: {str(e).splitlines()[0][:60]}")
                del qr, kr, vr
            if FA4:
                qs, ks, vs = (t.requires_grad_() for t in fa4.bshd(q, k, v))
                try:
                    o = fa4.forward(FA4, qs, ks, vs, causal)
                    (ds,) = fa4.bshd(dout)
                    ms = time_ms(lambda: torch.autograd.grad(o, (qs, ks, vs), ds, retain_graph=True), flush)
                    cells.append(f"FA4 {ms:8.3f} ms {flops / ms / 1e9:6.1f} TFLOP/s")
                except Exception as e:  # noqa: BLE001 — a shape FA4 refuses is said, not fatal
                    cells.append(f"FA4 failed: {str(e).splitlines()[0][:60] if str(e) else type(e).__name__}")
                del qs, ks, vs
            print(f"B={B} H={H} S={S} D={D}{' causal' if causal else '':<7}  " + "  |  ".join(cells), flush=True)
            del q, k, v, dout
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
