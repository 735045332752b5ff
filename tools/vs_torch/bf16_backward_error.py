"""How far torch's own bf16 attention backward lands from float64, on the same bf16 inputs: the measurement a bf16
backward's tolerance is set from (|got − want| ≤ atol + rtol·|want|, with got the bf16 gradient and want float64's).

For each shape, q, k, v and dout are drawn (normal, seeded) and rounded to bf16; float64 autograd on those bf16 values
gives the exact dQ, dK, dV; each of torch's bf16 backends (FlashAttention-2, cuDNN, memory-efficient) runs forward and
backward on the bf16 tensors. Printed per backend and gradient: the relative L2 error, the largest absolute error, and
the smallest atol with which every element passes at rtol = 1e-2 and 2e-2 (bf16 itself rounds at 2^-9 ≈ 2e-3).
Shapes: the ragged ones a grader uses (S = 1, 127, 129, Sq ≠ Sk) and the course's, head_dim 64 and 128, causal (torch
aligns is_causal top-left, so causal shapes here have Sq = Sk) or not.
Run on a GPU:  python3 tools/vs_torch/bf16_backward_error.py"""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

SHAPES = [  # B, H, Sq, Sk, D, causal
    (2, 3, 1, 1, 64, False), (2, 3, 127, 127, 64, True), (2, 3, 129, 129, 128, True), (2, 3, 127, 300, 128, False),
    (2, 3, 300, 129, 64, False), (2, 4, 1024, 1024, 64, False), (2, 4, 1024, 1024, 128, True),
    (1, 4, 4096, 4096, 128, False), (1, 4, 4096, 4096, 128, True), (1, 4, 4096, 4096, 64, True),
]
BACKENDS = [("flash (FA2)", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]


def grads(q, k, v, dout, causal):
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(dout)
    return {"dQ": q.grad, "dK": k.grad, "dV": v.grad}


def atol_needed(got, want, rtol):
    """The smallest atol with which |got − want| ≤ atol + rtol·|want| everywhere."""
    return (got.double() - want).abs().sub(rtol * want.abs()).clamp(min=0).max().item()


def main():
    dev = torch.cuda.get_device_properties(0)
    print(f"GPU: {dev.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    g = torch.Generator(device="cuda").manual_seed(2026)
    worst = {}
    for B, H, Sq, Sk, D, causal in SHAPES:
        q = torch.randn(B, H, Sq, D, device="cuda", generator=g).bfloat16()
        k, v = (torch.randn(B, H, Sk, D, device="cuda", generator=g).bfloat16() for _ in range(2))
        dout = torch.randn(B, H, Sq, D, device="cuda", generator=g).bfloat16()
        want = grads(q.double(), k.double(), v.double(), dout.double(), causal)
        print(f"\nB={B} H={H} Sq={Sq} Sk={Sk} D={D}{' causal' if causal else ''}")
        for name, be in BACKENDS:
            try:
                with sdpa_kernel(be):
                    got = grads(q, k, v, dout, causal)
            except RuntimeError as e:
                print(f"  {name:<12} not available: {str(e).splitlines()[0][:100]}")
                continue
            cells = []
            for gname in ("dQ", "dK", "dV"):
                w, x = want[gname], got[gname]
                # relative L2; 0 where the exact gradient is 0 (S = 1: one key, softmax's gradient vanishes)
                rel = ((x.double() - w).norm() / w.norm()).item() if w.norm() > 0 else 0.0
                a1, a2 = atol_needed(x, w, 1e-2), atol_needed(x, w, 2e-2)
                worst[(name, gname)] = max(worst.get((name, gname), (0, 0, 0)), (a1, a2, rel))
                cells.append(f"{gname} relL2 {rel:.1e} maxabs {(x.double() - w).abs().max().item():.1e} "
                             f"atol@1e-2 {a1:.1e} atol@2e-2 {a2:.1e}")
            print(f"  {name:<12} " + " | ".join(cells))
    print("\nworst over the shapes (atol at rtol 1e-2, at 2e-2, relative L2):")
    for (name, gname), (a1, a2, rel) in sorted(worst.items()):
        print(f"  {name:<12} {gname}: {a1:.2e}  {a2:.2e}  {rel:.1e}")


if __name__ == "__main__":
    main()
