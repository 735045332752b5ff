#!/usr/bin/env python3
"""The Python bridge on a GPU: each function against torch in float64 (the goldens' oracle), the
operator under torch.compile, a non-default current stream, per-sequence decode lengths; and the
backward (Task 4c): lse, dq, dk, dv against float64 autograd on the same float32 inputs, through the
bare kernels, attnlab.attention, the operator under torch.compile(fullgraph=True), a side stream, and
a Hugging Face GPT-2 training step against eager attention; and the same in bf16 (4b's forward, 4d's forward
with lse and backward), under autograd, torch.compile and torch.autocast; Task 5's paged decode with GQA against
float64 and SDPA's enable_gqa, under torch.compile.

    ATTNLAB_IMPL=reference /usr/bin/python3 python/tests/test_bridge_gpu.py [-v]   # make python IMPL=reference first

Without a CUDA device (or without the library) it prints "skipped: no CUDA device (…)" and exits
77, the "skipped" of tools/ci/run_tests.sh: nothing here is ever counted as passed without a GPU.
"""
import os
import sys
import unittest

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnlab  # noqa: E402

ATOL = RTOL = 2e-4  # Task 4's tolerance for float32 kernels against a float64 oracle (goldens' metadata)
# The gradients' tolerance, |g − g64| ≤ GRAD_ATOL + GRAD_RTOL·|g64|, inputs and dout ~ N(0, 1): float32 torch
# autograd and a float32 FlashAttention-2 recompute (P = exp(S − lse), D_i = rowsum(dO ∘ O)) both stay within
# 2.2e-6·(1 + |g64|) of float64 at these shapes (gradients up to ~11 where Sk = 1; float32 torch's worst is 3 %
# of this tolerance; measured on the CPU), so 2e-4 leaves over 30× for the kernel's own summation order (dQ
# accumulated by atomics in any order, exp2 with a folded log2 e); the bugs it must catch (D_i left out, a key
# tile dropped, a dQ race, the mask missing in the backward) are off by 0.1–1. The run prints each gradient's
# worst error beside float32 torch's on the same inputs.
GRAD_ATOL = GRAD_RTOL = 2e-4


def oracle(q, k, v, causal):
    """float64 attention, causal bottom-right aligned (key j visible to query i iff j ≤ i + Sk − Sq); rows that see no key are 0."""
    q, k, v = q.double(), k.double(), v.double()
    Sq, Sk, D = q.shape[2], k.shape[2], q.shape[3]
    s = q @ k.transpose(-1, -2) / D ** 0.5
    if causal:
        visible = torch.arange(Sk, device=q.device)[None, :] <= torch.arange(Sq, device=q.device)[:, None] + (Sk - Sq)
        s = s.masked_fill(~visible, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ v


def visible(Sq, Sk, causal, device="cuda"):
    i = torch.arange(Sq, device=device)[:, None]
    j = torch.arange(Sk, device=device)[None, :]
    return (j <= i + (Sk - Sq)) if causal else torch.ones(Sq, Sk, dtype=torch.bool, device=device)


def oracle_grad(q, k, v, causal, dout):
    """float64 autograd on the same float32 inputs: (o, lse, dq, dk, dv). A row that sees no key: o = 0, zero
    gradients, lse = +inf (task4_backward.h)."""
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    s = q64 @ k64.transpose(-1, -2) / q.shape[-1] ** 0.5
    vis = visible(q.shape[2], k.shape[2], causal)
    has_key = vis.any(-1, keepdim=True)
    s = torch.where(has_key, s.masked_fill(~vis, float("-inf")), torch.zeros_like(s))  # no key: a finite row, zeroed
    o = (torch.softmax(s, -1) * has_key) @ v64
    lse = torch.logsumexp(s, -1).masked_fill(~has_key[..., 0], float("inf"))
    dq, dk, dv = torch.autograd.grad(o, (q64, k64, v64), dout.double())
    return o.detach(), lse.detach(), dq, dk, dv


def torch32_grads(q, k, v, causal, dout):
    """float32 torch autograd of the same math (TF32 off): the yardstick each gradient test prints."""
    q32, k32, v32 = (x.detach().clone().requires_grad_() for x in (q, k, v))
    s = q32 @ k32.transpose(-1, -2) / q.shape[-1] ** 0.5
    vis = visible(q.shape[2], k.shape[2], causal)
    has_key = vis.any(-1, keepdim=True)
    s = torch.where(has_key, s.masked_fill(~vis, float("-inf")), torch.zeros_like(s))
    return torch.autograd.grad((torch.softmax(s, -1) * has_key) @ v32, (q32, k32, v32), dout)


def normal_inputs(B, H, Sq, Sk, D, seed, dtype=torch.float32):
    """q, k, v, dout ~ N(0, 1) on the GPU from `seed` (drawn in float32, then cast to `dtype`)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(B, H, Sq, D, device="cuda", generator=g)
    k, v = (torch.randn(B, H, Sk, D, device="cuda", generator=g) for _ in range(2))
    return tuple(x.to(dtype) for x in (q, k, v, torch.randn(B, H, Sq, D, device="cuda", generator=g)))


def grouped_oracle(q, k, v, causal, dout):
    """float64's (o, dq, dk, dv) for K and V with fewer heads than q (GQA): the oracle on K and V repeated to every
    query head, dk and dv summed back over each K/V head's group."""
    B, H, Sq, D = q.shape
    H_kv, Sk = k.shape[1], k.shape[2]
    g = H // H_kv
    o, _, dq, dk, dv = oracle_grad(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), causal, dout)
    return o, dq, dk.view(B, H_kv, g, Sk, D).sum(2), dv.view(B, H_kv, g, Sk, D).sum(2)


def grad_error(got, want):
    """max |g − g64| / (GRAD_ATOL + GRAD_RTOL·|g64|): ≤ 1 passes."""
    return ((got.double() - want).abs() / (GRAD_ATOL + GRAD_RTOL * want.abs())).max().item()


class OnGpu(unittest.TestCase):
    def close(self, got, want, what):
        self.assertEqual(got.shape, want.shape, what)
        err = (got.double() - want).abs()
        bad = err > ATOL + RTOL * want.abs()
        self.assertFalse(bool(bad.any()), f"{what}: {int(bad.sum())} elements off, max abs error {err.max().item():.3g}")

    def grads_close(self, got, want, what, yardstick=None, names=("dq", "dk", "dv")):
        """got = (dq, dk, dv) against float64's; the worst ratio is kept to be printed (beside float32 torch's)."""
        for name, g, w, y in zip(names, got, want, yardstick or (None,) * len(names)):
            self.assertEqual(g.shape, w.shape, f"{what} {name}")
            self.assertTrue(bool(torch.isfinite(g).all()), f"{what} {name}: not finite")
            ratio = grad_error(g, w)
            worst = WORST.setdefault(name, [0.0, 0.0, ""])
            if ratio > worst[0]:
                worst[:] = [ratio, grad_error(y, w) if y is not None else float("nan"), what]
            self.assertLessEqual(ratio, 1.0, f"{what} {name}: max |error| is {ratio:.3g}× the tolerance "
                                             f"(max abs error {(g.double() - w).abs().max().item():.3g})")

    def test_attention(self):
        g = torch.Generator(device="cuda").manual_seed(1)
        for D in (32, 64, 96, 128):
            for Sq, Sk in ((1, 1), (127, 127), (129, 129), (64, 200), (200, 64), (1, 129)):
                for causal in (False, True):
                    q = torch.randn(2, 3, Sq, D, device="cuda", generator=g)
                    k, v = (torch.randn(2, 3, Sk, D, device="cuda", generator=g) for _ in range(2))
                    self.close(attnlab.attention(q, k, v, causal=causal), oracle(q, k, v, causal),
                               f"attention D={D} Sq={Sq} Sk={Sk} causal={causal}")

    def test_decode(self):
        B, H, L, D = 3, 4, 300, 128
        q = torch.randn(B, H, 1, D, device="cuda")
        kc, vc = torch.randn(B, H, L, D, device="cuda"), torch.randn(B, H, L, D, device="cuda")
        for lengths in (1, 257, L, [5, 300, 129], torch.tensor([7, 7, 7])):
            got = attnlab.decode(q, kc, vc, lengths)
            per = lengths.tolist() if isinstance(lengths, torch.Tensor) else lengths if isinstance(lengths, list) else [lengths] * B
            want = torch.cat([oracle(q[b:b + 1], kc[b:b + 1, :, :n], vc[b:b + 1, :, :n], False) for b, n in enumerate(per)])
            self.close(got, want, f"decode lengths={lengths}")

    def test_softmax(self):
        for shape in ((1, 1), (7, 1000), (3, 5, 4097)):
            x = torch.randn(*shape, device="cuda") * 10
            self.close(attnlab.softmax(x), torch.softmax(x.double(), -1), f"softmax {shape}")

    def test_gemm(self):
        for (batch, M, N, K) in ((None, 65, 33, 17), (3, 128, 96, 64), (2, 1, 1, 1)):
            a = torch.randn(*(() if batch is None else (batch,)), M, K, device="cuda")
            b = torch.randn(*(() if batch is None else (batch,)), K, N, device="cuda")
            self.close(attnlab.gemm(a, b), a.double() @ b.double(), f"gemm_nn {batch} {M}x{N}x{K}")
            bt = b.transpose(-1, -2).contiguous()
            self.close(attnlab.gemm(a, bt, transpose_b=True), a.double() @ b.double(), f"gemm_nt {batch} {M}x{N}x{K}")

    def test_side_stream(self):  # inputs made on a side stream, output used there at once: ordered by the bridge
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            q, k, v = (torch.randn(4, 8, 512, 64, device="cuda") for _ in range(3))
            o = attnlab.attention(q, k, v, causal=True) * 1.0
        torch.cuda.synchronize()
        self.close(o, oracle(q, k, v, True), "attention on a side stream")

    def test_graph_capture_refused(self):  # the legacy default stream cannot be captured: an error, never a wrong graph
        q = torch.randn(1, 2, 8, 32, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with self.assertRaises(RuntimeError) as cm:
            with torch.cuda.graph(graph):
                attnlab.attention(q, q, q)
        chain, e = [], cm.exception  # ours, or ours under the one ending the capture raised
        while e is not None:
            chain.append(str(e))
            e = e.__context__
        self.assertTrue(any("CUDA graph capture" in m for m in chain), chain)
        self.close(attnlab.attention(q, q, q), oracle(q, q, q, False), "attention after a refused capture")

    def test_op_and_compile(self):
        q, k, v = (torch.randn(2, 4, 100, 64, device="cuda") for _ in range(3))
        self.close(torch.ops.attnlab.attention(q, k, v, True), oracle(q, k, v, True), "torch.ops.attnlab.attention")
        if not hasattr(torch, "compile"):
            self.skipTest(f"torch {torch.__version__} has no torch.compile")
        f = torch.compile(lambda q, k, v: torch.ops.attnlab.attention(q * 2.0, k, v, True) + 1.0, fullgraph=True)
        self.close(f(q, k, v), oracle(q * 2.0, k, v, True) + 1.0, "attnlab::attention under torch.compile(fullgraph)")

    def test_cuda_errors_are_runtime_errors(self):
        q = torch.randn(1, 1, 4, 32, device="cuda")
        attnlab.synchronize()
        # a launch with 70000 heads over the grid's y limit, or any C++ error: a RuntimeError, never a crash
        big = torch.empty(1, 70000, 1, 32, device="cuda")
        try:
            attnlab.attention(big, big, big)
        except RuntimeError as e:
            self.assertIn("flash_attention_forward", str(e))
        attnlab.synchronize()
        self.assertEqual(attnlab.attention(q, q, q).shape, q.shape)


WORST = {}  # gradient name → [worst error / tolerance, float32 torch's on the same inputs, which case]
GRAD_SHAPES = ((1, 1), (127, 127), (129, 129), (64, 200), (200, 64), (1, 129), (129, 1), (1000, 1000))


class Backward(OnGpu):
    @classmethod
    def setUpClass(cls):
        torch.backends.cuda.matmul.allow_tf32 = False  # the float32 yardstick in full float32
        torch.backends.cudnn.allow_tf32 = False

    def inputs(self, B, H, Sq, Sk, D, seed):
        return normal_inputs(B, H, Sq, Sk, D, seed)

    def test_kernels(self):
        """The bare kernels: attention_with_lse's o and lse, attention_backward's dq, dk, dv."""
        for D in (32, 64, 96, 128):
            for Sq, Sk in GRAD_SHAPES:
                for causal in (False, True):
                    what = f"D={D} Sq={Sq} Sk={Sk} causal={causal}"
                    q, k, v, dout = self.inputs(2, 3, Sq, Sk, D, seed=D * 7 + Sq * 13 + Sk + causal)
                    o64, lse64, *g64 = oracle_grad(q, k, v, causal, dout)
                    o, lse = attnlab.attention_with_lse(q, k, v, causal=causal)
                    self.close(o, o64, f"attention_with_lse o {what}")
                    seen = torch.isfinite(lse64)
                    self.assertTrue(bool((lse[~seen] == float("inf")).all()), f"{what}: lse of a row with no key is not +inf")
                    self.close(lse[seen], lse64[seen], f"attention_with_lse lse {what}")
                    got = attnlab.attention_backward(q, k, v, o, dout, lse, causal=causal)
                    self.grads_close(got, g64, f"attention_backward {what}", torch32_grads(q, k, v, causal, dout))
                    if causal and Sq > Sk:
                        self.assertEqual(got[0][:, :, :Sq - Sk].abs().max().item(), 0.0, f"{what}: dq of rows with no key")

    def test_autograd(self):
        """attnlab.attention and torch.ops.attnlab.attention under autograd: a gradient arriving transposed
        (not contiguous), one input alone requiring grad, B·H not a multiple of anything."""
        for fn in (attnlab.attention, torch.ops.attnlab.attention):
            for B, H, Sq, Sk, D, causal in ((3, 5, 129, 127, 64, True), (1, 7, 200, 64, 128, True), (2, 3, 1, 77, 32, False)):
                q, k, v, dout = self.inputs(B, H, Sq, Sk, D, seed=Sq + Sk)
                _, _, *g64 = oracle_grad(q, k, v, causal, dout)
                leaves = [x.clone().requires_grad_() for x in (q, k, v)]
                o = fn(*leaves, causal)
                (o.transpose(1, 2) * dout.transpose(1, 2)).sum().backward()
                self.grads_close([x.grad for x in leaves], g64, f"{getattr(fn, '__name__', fn)} B={B} H={H} Sq={Sq} Sk={Sk}")
            kk = k.clone().requires_grad_()
            fn(q, kk, v, causal).backward(dout)
            self.grads_close([kk.grad], [g64[1]], "only k requires grad", names=("dk",))

    def test_grouped_query_attention(self):
        """enable_gqa=True: 8 query heads on 2 K/V heads and on 1 (MQA); unmasked and single-query calls fold each
        group into one query, causal prompts repeat K and V. Forward and gradients against float64 on K and V
        repeated (dk, dv summed over the group), SDPA's enable_gqa beside it where its causal alignment is the same."""
        for H_kv in (2, 1):
            for Sq, Sk, causal in ((129, 127, False), (1, 300, True), (127, 129, True), (200, 200, True)):
                what = f"enable_gqa H=8 H_kv={H_kv} Sq={Sq} Sk={Sk} causal={causal}"
                q, k, v, dout = self.inputs(2, 8, Sq, Sk, 64, seed=Sq + Sk + H_kv)
                k, v = k[:, :H_kv].contiguous(), v[:, :H_kv].contiguous()
                o64, *g64 = grouped_oracle(q, k, v, causal, dout)
                self.close(attnlab.attention(q, k, v, causal=causal, enable_gqa=True), o64, what)
                if not causal or Sq == Sk:
                    sdpa = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal,
                                                                            enable_gqa=True)
                    self.close(attnlab.attention(q, k, v, causal=causal, enable_gqa=True), sdpa, what + " against SDPA")
                leaves = [x.clone().requires_grad_() for x in (q, k, v)]
                attnlab.attention(*leaves, causal=causal, enable_gqa=True).backward(dout)
                self.grads_close([x.grad for x in leaves], g64, what)
        compiled = torch.compile(lambda q, k, v: attnlab.attention(q, k, v, causal=False, enable_gqa=True), fullgraph=True)
        q, k, v, dout = self.inputs(1, 4, 64, 100, 32, seed=5)
        k, v = k[:, :1].contiguous(), v[:, :1].contiguous()
        o64, *g64 = grouped_oracle(q, k, v, False, dout)
        leaves = [x.clone().requires_grad_() for x in (q, k, v)]
        o = compiled(*leaves)
        self.close(o, o64, "enable_gqa under torch.compile(fullgraph=True)")
        o.backward(dout)
        self.grads_close([x.grad for x in leaves], g64, "enable_gqa under torch.compile")

    def test_compile_fullgraph_forward_and_backward(self):
        if not hasattr(torch, "compile"):
            self.skipTest(f"torch {torch.__version__} has no torch.compile")
        q, k, v, dout = self.inputs(2, 4, 129, 100, 64, seed=5)
        f = torch.compile(lambda q, k, v: torch.ops.attnlab.attention(q * 2.0, k, v, True) + 1.0, fullgraph=True)
        leaves = [x.clone().requires_grad_() for x in (q, k, v)]
        o = f(*leaves)
        o.backward(dout)
        o64, _, *g64 = oracle_grad(q * 2.0, k, v, True, dout)
        self.close(o.detach(), o64 + 1.0, "forward under torch.compile(fullgraph)")
        g64[0] = g64[0] * 2.0  # d/dq of attention(2q, …)
        self.grads_close([x.grad for x in leaves], g64, "backward under torch.compile(fullgraph)")
        with torch.no_grad():  # and inference recompiled without lse
            self.close(f(q, k, v), o64 + 1.0, "torch.compile(fullgraph) under no_grad")

    def test_side_stream(self):  # forward and backward queued on a side stream, used there at once
        q, k, v, dout = self.inputs(4, 8, 512, 512, 64, seed=9)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            leaves = [x.clone().requires_grad_() for x in (q, k, v)]
            attnlab.attention(*leaves, causal=True).backward(dout)
            got = [x.grad * 1.0 for x in leaves]
        torch.cuda.synchronize()
        _, _, *g64 = oracle_grad(q, k, v, True, dout)
        self.grads_close(got, g64, "forward and backward on a side stream")

    def test_no_double_backward(self):
        q, k, v, _ = self.inputs(1, 2, 16, 16, 32, seed=3)
        q.requires_grad_()
        with self.assertRaises((RuntimeError, ValueError)):
            dq, = torch.autograd.grad(attnlab.attention(q, k, v).sum(), q, create_graph=True)
            dq.sum().backward()

    def test_hugging_face_training_step(self):
        """GPT-2 (transformers) in train(), attention dropout 0: the loss and every parameter's gradient of one
        step on "attnlab" against "eager", float32; dropout > 0 is refused."""
        try:
            import transformers
            import attnlab.hf
        except ImportError as e:
            self.skipTest(f"no transformers ({e})")
        attnlab.hf.register()
        cfg = dict(n_layer=2, n_embd=128, n_head=2, n_positions=256, vocab_size=1000, attn_pdrop=0.0, resid_pdrop=0.0,
                   embd_pdrop=0.0)
        ids = torch.randint(0, 1000, (2, 200), device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
        grads = {}
        for impl in ("eager", "attnlab"):
            torch.manual_seed(0)
            model = transformers.GPT2LMHeadModel._from_config(transformers.GPT2Config(**cfg), attn_implementation=impl)
            model = model.cuda().train()
            loss = model(ids, labels=ids).loss
            loss.backward()
            grads[impl] = (loss.item(), {n: p.grad for n, p in model.named_parameters()})
        self.assertAlmostEqual(grads["attnlab"][0], grads["eager"][0], delta=1e-4)
        for name, g in grads["eager"][1].items():
            mine = grads["attnlab"][1][name]
            rel = ((mine - g).norm() / g.norm().clamp_min(1e-30)).item()
            self.assertLess(rel, 1e-3, f"GPT-2 gradient of {name}: relative difference {rel:.3g} from eager")
        torch.manual_seed(0)
        model = transformers.GPT2LMHeadModel._from_config(transformers.GPT2Config(**dict(cfg, attn_pdrop=0.1)),
                                                          attn_implementation="attnlab").cuda().train()
        with self.assertRaisesRegex(ValueError, "dropout"):
            model(ids, labels=ids)


# bf16 (Task 4's bf16 parts: 4b's forward, 4d's forward with lse and backward) against float64 on the same bf16
# inputs, with the parts' own tolerances: O as 4b's (task4_bf16/cases_bf16.cpp), lse and the gradients as 4d's
# (task4_bf16_backward/cases_bf16_backward.cpp), each gradient's relative L2 error too.
BF16_O = (4e-3, 1.6e-2)
BF16_LSE = (1e-4, 1e-4)
BF16_GRAD, BF16_GRAD_L2 = (2e-2, 2e-2), 6e-3
BF16_WORST = {}  # "o", "lse", "dq", … → [worst error / tolerance, which case]


class Bf16(unittest.TestCase):
    def inputs(self, B, H, Sq, Sk, D, seed):
        return normal_inputs(B, H, Sq, Sk, D, seed, torch.bfloat16)

    def within(self, got, want, tol, what, l2=None, kind=None):
        """got within tol (atol, rtol) of want element-wise, and within l2 as a whole; the worst share of the tolerance
        of each kind (o, lse, dq, …) is kept to be printed."""
        err = (got.double() - want).abs()
        ratio = (err / (tol[0] + tol[1] * want.abs())).max().item() if want.numel() else 0.0
        if kind:
            worst = BF16_WORST.setdefault(kind, [0.0, ""])
            worst[:] = max(worst, [ratio, what])
        self.assertLessEqual(ratio, 1.0, f"{what}: max |error| {err.max().item():.3g} is {ratio:.3g}× the tolerance")
        if l2 is not None and want.norm() > 0:
            rel = ((got.double() - want).norm() / want.norm()).item()
            self.assertLessEqual(rel, l2, f"{what}: relative L2 error {rel:.3g} above {l2}")

    def test_forward(self):
        for D in (64, 128):
            for Sq, Sk in ((1, 1), (127, 127), (129, 129), (64, 200), (200, 64), (1, 129)):
                for causal in (False, True):
                    q, k, v, _ = self.inputs(2, 3, Sq, Sk, D, seed=D + Sq * 3 + Sk + causal)
                    self.within(attnlab.attention(q, k, v, causal=causal), oracle(q, k, v, causal), BF16_O,
                                f"bf16 attention D={D} Sq={Sq} Sk={Sk} causal={causal}", l2=4e-3)

    def test_kernels(self):
        """attention_with_lse (4d's forward) and attention_backward (4d) on bf16 tensors."""
        for D in (64, 128):
            for Sq, Sk in GRAD_SHAPES:
                for causal in (False, True):
                    what = f"bf16 D={D} Sq={Sq} Sk={Sk} causal={causal}"
                    q, k, v, dout = self.inputs(2, 3, Sq, Sk, D, seed=D * 7 + Sq * 13 + Sk + causal)
                    o64, lse64, *g64 = oracle_grad(q, k, v, causal, dout)
                    o, lse = attnlab.attention_with_lse(q, k, v, causal=causal)
                    self.assertEqual((o.dtype, lse.dtype), (torch.bfloat16, torch.float32), what)
                    self.within(o, o64, BF16_O, f"attention_with_lse o {what}", l2=4e-3, kind="o")
                    seen = torch.isfinite(lse64)
                    self.assertTrue(bool((lse[~seen] == float("inf")).all()), f"{what}: lse of a row with no key is not +inf")
                    self.within(lse[seen], lse64[seen], BF16_LSE, f"attention_with_lse lse {what}", kind="lse")
                    o_in = o64.bfloat16()  # the backward judged on its own: O from float64, rounded as a bf16 forward's
                    got = attnlab.attention_backward(q, k, v, o_in, dout, lse64.float(), causal=causal)
                    for name, g, w in zip(("dq", "dk", "dv"), got, g64):
                        self.assertEqual(g.dtype, torch.bfloat16, f"{name} {what}")
                        self.within(g, w, BF16_GRAD, f"attention_backward {name} {what}", l2=BF16_GRAD_L2, kind=name)

    def test_autograd_compile_and_autocast(self):
        """attnlab.attention under autograd, under torch.compile(fullgraph=True), and inside torch.autocast (q, k, v from
        a Linear in bf16): the gradients against float64's of the same bf16 inputs."""
        q, k, v, dout = self.inputs(2, 4, 300, 257, 64, seed=11)
        _, _, *g64 = oracle_grad(q, k, v, True, dout)
        compiled = torch.compile(lambda q, k, v: torch.ops.attnlab.attention(q, k, v, True), fullgraph=True)
        for what, fn in (("autograd", lambda *x: attnlab.attention(*x, causal=True)), ("torch.compile", compiled)):
            leaves = [x.clone().requires_grad_() for x in (q, k, v)]
            fn(*leaves).backward(dout)
            for name, x, w in zip(("dq", "dk", "dv"), leaves, g64):
                self.within(x.grad, w, BF16_GRAD, f"{what} {name}", l2=BF16_GRAD_L2)
        lin = torch.nn.Linear(64, 3 * 64, device="cuda", bias=False)
        bias = torch.randn(3 * 64, device="cuda", requires_grad=True)
        x = torch.randn(2, 4, 300, 64, device="cuda", requires_grad=True)
        grads = {}
        for impl in ("attnlab", "sdpa"):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                a, b, c = (lin(x) + bias).chunk(3, dim=-1)  # the bias added after autocast's matmul: float32, as GPT-2's
                a, b, c = a.contiguous(), b.contiguous(), c.contiguous()
                self.assertEqual(a.dtype, torch.float32)  # attnlab.attention casts it to bf16, as autocast does for SDPA
                o = (attnlab.attention(a, b, c, causal=True) if impl == "attnlab"
                     else torch.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True))
            self.assertEqual(o.dtype, torch.bfloat16, impl)
            grads[impl] = torch.autograd.grad(o.float().square().sum(), (x, lin.weight, bias))
        for name, m, s in zip(("x", "weight", "bias"), grads["attnlab"], grads["sdpa"]):
            rel = ((m - s).norm() / s.norm()).item()
            self.assertLess(rel, 2e-2, f"autocast: the gradient of {name} is {rel:.3g} (relative L2) from SDPA's")

    def test_grouped_query_attention(self):  # enable_gqa in bf16: 4b's forward on the folded group, 4d's backward
        for Sq, Sk, causal in ((1, 257, True), (200, 129, False), (129, 129, True)):
            what = f"bf16 enable_gqa H=8 H_kv=2 Sq={Sq} Sk={Sk} causal={causal}"
            q, k, v, dout = self.inputs(2, 8, Sq, Sk, 128, seed=Sq * 3 + Sk)
            k, v = k[:, :2].contiguous(), v[:, :2].contiguous()
            o64, *g64 = grouped_oracle(q, k, v, causal, dout)
            self.within(attnlab.attention(q, k, v, causal=causal, enable_gqa=True), o64, BF16_O, what, l2=4e-3)
            leaves = [x.clone().requires_grad_() for x in (q, k, v)]
            attnlab.attention(*leaves, causal=causal, enable_gqa=True).backward(dout)
            for name, x, w in zip(("dq", "dk", "dv"), leaves, g64):
                self.within(x.grad, w, BF16_GRAD, f"{what} {name}", l2=BF16_GRAD_L2)

    def test_misaligned_view_refused(self):
        q, k, v, _ = self.inputs(1, 1, 64, 64, 64, seed=2)
        flat = torch.empty(q.numel() + 1, dtype=torch.bfloat16, device="cuda")
        shifted = flat[1:].view(q.shape)  # contiguous, but 2 bytes past a 16-byte boundary
        with self.assertRaisesRegex(ValueError, "16-byte"):
            attnlab.attention(shifted, k, v)



def paged_batch(lengths, H_q, H_kv, D, page_size, seed):
    """q [B, H_q, D] and a pool of shuffled pages [num_pages, page_size, H_kv, D] (bf16) holding each sequence's
    positions, NaN in every slot no position holds and in a spare page; the table (unused entries −1) and the
    sequences' K, V as lists [L, H_kv, D] for the oracle."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    used = [(L + page_size - 1) // page_size for L in lengths]
    num_pages = sum(used) + 1
    perm = torch.randperm(num_pages, generator=torch.Generator().manual_seed(seed)).tolist()
    pages_per_seq = max(used) + 1
    table = torch.full((len(lengths), pages_per_seq), -1, dtype=torch.int32)
    k_pages = torch.full((num_pages, page_size, H_kv, D), float("nan"), device="cuda").bfloat16()
    v_pages = k_pages.clone()
    ks, vs, nxt = [], [], 0
    for b, L in enumerate(lengths):
        k, v = (torch.randn(L, H_kv, D, device="cuda", generator=g).bfloat16() for _ in range(2))
        for p in range(used[b]):
            page, n = perm[nxt], min(page_size, L - p * page_size)
            nxt += 1
            table[b, p] = page
            k_pages[page, :n], v_pages[page, :n] = k[p * page_size:p * page_size + n], v[p * page_size:p * page_size + n]
        ks.append(k), vs.append(v)
    q = torch.randn(len(lengths), H_q, D, device="cuda", generator=g).bfloat16()
    return q, k_pages, v_pages, table, torch.tensor(lengths, dtype=torch.int32), ks, vs


def paged_oracle(q, ks, vs):
    """float64 attention of each sequence's query heads over its positions, query head h on KV head h // g."""
    out = []
    for b, (k, v) in enumerate(zip(ks, vs)):
        g = q.shape[1] // k.shape[1]
        kk, vv = (x.double().transpose(0, 1).repeat_interleave(g, 0) for x in (k, v))  # [H_q, L, D]
        s = (q[b].double().unsqueeze(1) @ kk.transpose(1, 2)) / q.shape[2] ** 0.5     # [H_q, 1, L]
        out.append((torch.softmax(s, -1) @ vv).squeeze(1))
    return torch.stack(out)


class PagedDecode(unittest.TestCase):  # Task 5's paged part: its tolerance is 4b's (task5_paged/README.md)
    within = Bf16.within

    def test_against_float64(self):
        for lengths, H_q, H_kv, D, page in (([1, 300, 129], 16, 4, 128, 16), ([64, 65], 32, 1, 128, 64),
                                             ([5, 2000, 1], 8, 8, 64, 1), ([4096], 32, 8, 128, 256)):
            q, kp, vp, table, lens, ks, vs = paged_batch(lengths, H_q, H_kv, D, page, seed=len(lengths) + H_kv + page)
            what = f"paged_decode lengths={lengths} H_q={H_q} H_kv={H_kv} D={D} page={page}"
            self.within(attnlab.paged_decode(q, kp, vp, table, lens), paged_oracle(q, ks, vs), BF16_O, what, l2=4e-3,
                        kind="paged o")
            # the tables on the GPU (read back by the bridge) and as lists give the same
            self.assertTrue(torch.equal(attnlab.paged_decode(q, kp, vp, table.cuda(), lens.cuda()),
                                        attnlab.paged_decode(q, kp, vp, table.tolist(), lens.tolist())), what)

    def test_compile_and_sdpa(self):  # torch.compile(fullgraph=True), and SDPA's enable_gqa on the gathered cache
        q, kp, vp, table, lens, ks, vs = paged_batch([700, 700], 32, 8, 128, 64, seed=5)
        fn = torch.compile(lambda q, kp, vp, t, n: attnlab.paged_decode(q, kp, vp, t, n) * 2, fullgraph=True)
        got = fn(q, kp, vp, table, lens) / 2
        self.within(got, paged_oracle(q, ks, vs), BF16_O, "paged_decode under torch.compile", kind="paged o")
        k, v = (torch.stack(x).transpose(1, 2) for x in (ks, vs))  # [B, H_kv, L, D]
        sdpa = torch.nn.functional.scaled_dot_product_attention(q.unsqueeze(2), k, v, enable_gqa=True).squeeze(2)
        self.within(got, sdpa.double(), BF16_O, "paged_decode against SDPA (enable_gqa)")

    def test_bad_page_names_the_entry(self):  # the kernel's own check, as RuntimeError naming the entry
        q, kp, vp, table, lens, _, _ = paged_batch([40, 17], 8, 2, 64, 16, seed=3)
        table[1, 1] = kp.shape[0]
        with self.assertRaisesRegex(RuntimeError, r"page_table\[1\]\[1\]"):
            attnlab.paged_decode(q, kp, vp, table, lens)


def print_worst():
    for name, (ratio, torch32, what) in sorted(WORST.items()):
        print(f"gradients: worst {name} error {ratio:.3g}× the tolerance (float32 torch on the same inputs: "
              f"{torch32:.3g}×) at {what}")
    for name, (ratio, what) in sorted(BF16_WORST.items()):
        print(f"bf16: worst {name} error {ratio:.3g}× the tolerance at {what}")


def main():
    why = None
    if not torch.cuda.is_available():
        why = f"torch {torch.__version__} sees none"
    else:
        if attnlab.device_count() == 0:  # a missing library raises here: on a GPU machine that is a failure
            why = "the bridge's CUDA runtime sees none"
    if why:
        print(f"skipped: no CUDA device ({why})")
        return 77
    print(f"attnlab: {attnlab.library_path()[0]} ({attnlab.impl()}); torch {torch.__version__}; {torch.cuda.get_device_name()}")
    result = unittest.main(exit=False, argv=[sys.argv[0]] + sys.argv[1:]).result
    print_worst()
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
