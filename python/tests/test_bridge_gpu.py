#!/usr/bin/env python3
"""The Python bridge on a GPU: each function against torch in float64 (the goldens' oracle), the
operator under torch.compile, a non-default current stream, per-sequence decode lengths.

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


class OnGpu(unittest.TestCase):
    def close(self, got, want, what):
        self.assertEqual(got.shape, want.shape, what)
        err = (got.double() - want).abs()
        bad = err > ATOL + RTOL * want.abs()
        self.assertFalse(bool(bad.any()), f"{what}: {int(bad.sum())} elements off, max abs error {err.max().item():.3g}")

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
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
