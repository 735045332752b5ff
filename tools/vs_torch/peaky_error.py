#!/usr/bin/env python3
"""Errors on peaky inputs (q and k scaled by 2-4: scores up to 16x their variance, a softmax near one-hot), in
tolerances: Task 4's fp32 forward and 4c's forward-with-lse and backward (through the bridge), beside torch's fp32
SDPA backends (math, efficient), each against float64 autograd on the same fp32 values. With --bf16: 4d's backward
beside torch's bf16 backends (FA2, cuDNN, efficient), on bf16 inputs, in 4d's tolerance (2e-2 + 2e-2·|want|), at
scales 1 to 4.

    ATTNLAB_LIB=…/libattnlab.so python3 tools/vs_torch/peaky_error.py [--seeds 10] [--bf16]      # a CUDA build of torch

A figure is the largest over the elements of |got − want| / (atol + rtol·|want|), atol 2e-5, rtol 1e-4 (the fp32
tasks' tolerance; > 1 fails a case). 4c's backward is also run on float64's own o and lse rounded to fp32 ("exact
o, lse") and on mixtures, to tell the backward's own error from what its inputs bring.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import attnlab  # noqa: E402

ATOL, RTOL = 2e-5, 1e-4


def ratio(got, want):
    return ((got.double() - want).abs() / (ATOL + RTOL * want.abs())).max().item()


def exact(q, k, v, dout, causal):
    """float64 autograd: o, lse, dq, dk, dv (Sq = Sk here: top-left and bottom-right causal agree)."""
    q64, k64, v64 = (x.double().requires_grad_() for x in (q, k, v))
    s = q64 @ k64.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.softmax(s, dim=-1) @ v64
    o.backward(dout.double())
    return o.detach(), lse.detach(), q64.grad, k64.grad, v64.grad


def torch_backend(backend, q, k, v, dout, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    qs, ks, vs = (x.clone().requires_grad_() for x in (q, k, v))
    with sdpa_kernel([getattr(SDPBackend, backend)]):
        o = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
        o.backward(dout)
    return o.detach(), qs.grad, ks.grad, vs.grad


def rel_l2(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


def bf16_table(seeds):
    """4d and torch's bf16 backends against float64 on bf16 inputs with q and k × 1…4, in 4d's tolerance."""
    global ATOL, RTOL
    ATOL, RTOL = 2e-2, 2e-2
    backends = ["FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"]
    cols = ["4d dq", "4d dk", "4d dv"] + [f"{b.split('_')[0].lower()} {g}" for b in backends for g in ("dq", "dk", "dv")]
    cols += ["L2 4d dq", "L2 4d dk"] + [f"L2 {b.split('_')[0].lower()} {g}" for b in backends for g in ("dq", "dk")]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; bf16 inputs, worst over {seeds} seeds, in 4d's "
          f"tolerance (atol {ATOL}, rtol {RTOL}); L2: the relative L2 error in thousandths (4d's bound: 6)")
    print("| B·H·S·D, scale, causal | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for B, H, S, D, causal in [(2, 3, 500, 64, False), (2, 3, 500, 128, True), (1, 4, 2048, 128, False)]:
        for scale in (1.0, 2.0, 3.0, 4.0):
            worst = [0.0] * len(cols)
            for seed in range(seeds):
                g = torch.Generator(device="cuda").manual_seed(seed)
                q, k, v, dout = (torch.randn(B, H, S, D, device="cuda", generator=g) for _ in range(4))
                q, k, v, dout = ((q * scale).bfloat16(), (k * scale).bfloat16(), v.bfloat16(), dout.bfloat16())
                _, _, dq64, dk64, dv64 = exact(q, k, v, dout, causal)
                o, lse = attnlab.attention_with_lse(q, k, v, causal=causal)
                mine = attnlab.attention_backward(q, k, v, o, dout, lse, causal=causal)
                got = [ratio(x, w) for x, w in zip(mine, (dq64, dk64, dv64))]
                l2 = [rel_l2(mine[0], dq64), rel_l2(mine[1], dk64)]
                for b in backends:
                    _, dqb, dkb, dvb = torch_backend(b, q, k, v, dout, causal)
                    got += [ratio(dqb, dq64), ratio(dkb, dk64), ratio(dvb, dv64)]
                    l2 += [rel_l2(dqb, dq64), rel_l2(dkb, dk64)]
                got += [x * 1000 for x in l2]  # relative L2, in thousandths
                worst = [max(a, x) for a, x in zip(worst, got)]
            print(f"| {B}·{H}·{S}·{D}, ×{scale:g}, {'causal' if causal else 'full'} | " + " | ".join(f"{w:.2f}" for w in worst) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--bf16", action="store_true", help="4d against torch's bf16 backends")
    args = ap.parse_args()
    if args.bf16:
        return bf16_table(args.seeds)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    shapes = [(1, 1, 4096, 64, 3.0, False), (1, 1, 4096, 64, 3.0, True), (2, 3, 600, 128, 4.0, False),
              (2, 3, 600, 128, 4.0, True), (1, 4, 1024, 32, 2.0, True)]
    cols = ["fwd 4", "fwd 4c", "4c dq", "4c dk", "4c dv", "dq exact o,lse", "dq exact o", "dq exact lse",
            "math o", "math dq", "math dk", "math dv", "eff o", "eff dq", "eff dk", "eff dv"]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; worst over {args.seeds} seeds, in tolerances "
          f"(atol {ATOL}, rtol {RTOL})")
    print("| B·H·S·D, scale, causal | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for B, H, S, D, scale, causal in shapes:
        worst = [0.0] * len(cols)
        for seed in range(args.seeds):
            g = torch.Generator(device="cuda").manual_seed(seed)
            q, k, v, dout = (torch.randn(B, H, S, D, device="cuda", generator=g) for _ in range(4))
            q, k = q * scale, k * scale
            o64, lse64, dq64, dk64, dv64 = exact(q, k, v, dout, causal)
            with torch.no_grad():
                o4 = attnlab.attention(q, k, v, causal=causal)
            o, lse = attnlab.attention_with_lse(q, k, v, causal=causal)
            dq, dk, dv = attnlab.attention_backward(q, k, v, o, dout, lse, causal=causal)
            o_x, lse_x = o64.float(), lse64.float()
            dq_x = attnlab.attention_backward(q, k, v, o_x, dout, lse_x, causal=causal)[0]
            dq_xo = attnlab.attention_backward(q, k, v, o_x, dout, lse, causal=causal)[0]
            dq_xl = attnlab.attention_backward(q, k, v, o, dout, lse_x, causal=causal)[0]
            om, dqm, dkm, dvm = torch_backend("MATH", q, k, v, dout, causal)
            oe, dqe, dke, dve = torch_backend("EFFICIENT_ATTENTION", q, k, v, dout, causal)
            got = [ratio(o4, o64), ratio(o, o64), ratio(dq, dq64), ratio(dk, dk64), ratio(dv, dv64), ratio(dq_x, dq64),
                   ratio(dq_xo, dq64), ratio(dq_xl, dq64), ratio(om, o64), ratio(dqm, dq64), ratio(dkm, dk64), ratio(dvm, dv64),
                   ratio(oe, o64), ratio(dqe, dq64), ratio(dke, dk64), ratio(dve, dv64)]
            worst = [max(a, b) for a, b in zip(worst, got)]
        print(f"| {B}·{H}·{S}·{D}, ×{scale:g}, {'causal' if causal else 'full'} | " +
              " | ".join(f"{w:.2f}" for w in worst) + " |")


if __name__ == "__main__":
    main()
