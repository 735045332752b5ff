#!/usr/bin/env python3
"""The Python bridge without a GPU (make test runs it): every argument check and its message, with
CPU torch tensors; the attnlab operators' registration and fake kernels; the autograd wiring of
attnlab.attention (its kernels replaced by float64 torch on the CPU: the wiring is tested, not the
kernels); the hf adapter's refusals; how a missing library and a C++ error are reported; that `make
python` builds, and that the package installs (`pip install -e python/`, and the wheel) and finds its
library without PYTHONPATH; and tools/vs_torch/train_attnlab.py end to end in its CPU test mode.

    /usr/bin/python3 python/tests/test_bridge.py [-v]       # from the repository root

The tests on a GPU are python/tests/test_bridge_gpu.py.
"""
import ctypes
import math
import os
import subprocess
import sys
import unittest

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnlab  # noqa: E402
from attnlab import _library, hf  # noqa: E402

IMPL = "reference" if os.path.isdir(os.path.join(ROOT, "task4", "reference")) else "skeleton"  # the kit has no reference


def t(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


class Raises(unittest.TestCase):
    def check(self, exc, words, fn, *args, **kwargs):
        """fn(*args) raises `exc` whose message holds every one of `words`."""
        with self.assertRaises(exc) as cm:
            fn(*args, **kwargs)
        for w in words:
            self.assertIn(w, str(cm.exception))


class AttentionChecks(Raises):
    def test_not_a_tensor(self):
        self.check(TypeError, ["q:", "torch.Tensor", "list"], attnlab.attention, [1.0], t(1, 1, 4, 32), t(1, 1, 4, 32))

    def test_dtype(self):
        self.check(TypeError, ["k:", "float16", "float32"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 4, 32, dtype=torch.float16),
                   t(1, 1, 4, 32))

    def test_bf16_mixed_with_float32(self):  # bf16 is Task 4's bf16 parts; one dtype for q, k and v
        b = t(1, 1, 4, 64, dtype=torch.bfloat16)
        self.check(TypeError, ["k:", "float32", "q is torch.bfloat16", "one dtype"], attnlab.attention, b, t(1, 1, 4, 64), b)

    def test_bf16_head_dim(self):  # the bf16 forward has head dims 64 and 128 only
        b = t(1, 1, 4, 32, dtype=torch.bfloat16)
        self.check(ValueError, ["q:", "head_dim", "32", "bf16 kernels support 64, 128"], attnlab.attention, b, b, b)

    def test_fewer_kv_heads_asks_for_enable_gqa(self):  # SDPA's semantics: GQA only when asked for
        self.check(ValueError, ["k:", "heads", "2 K/V heads shared by 4 query heads", "enable_gqa=True"], attnlab.attention,
                   t(1, 4, 3, 32), t(1, 2, 3, 32), t(1, 2, 3, 32))

    def test_enable_gqa_heads_must_divide(self):
        self.check(ValueError, ["k:", "3 heads do not divide q's 4"], attnlab.attention, t(1, 4, 3, 32), t(1, 3, 3, 32),
                   t(1, 3, 3, 32), enable_gqa=True)
        self.check(ValueError, ["k and v:", "shapes differ"], attnlab.attention, t(1, 4, 3, 32), t(1, 2, 3, 32),
                   t(1, 2, 4, 32), enable_gqa=True)
        self.check(ValueError, ["q:", "not contiguous"], attnlab.attention, t(1, 3, 4, 32).transpose(1, 2), t(1, 2, 3, 32),
                   t(1, 2, 3, 32), enable_gqa=True)

    def test_bf16_device(self):  # a bf16 call with everything else right: only the device is wrong
        q, kv = t(2, 3, 5, 128, dtype=torch.bfloat16), t(2, 3, 9, 128, dtype=torch.bfloat16)
        self.check(ValueError, ["q:", "is on cpu", "CUDA"], attnlab.attention, q, kv, kv, causal=True)

    def test_autocast_casts_to_bf16(self):  # as CUDA autocast does for SDPA (its state faked: this torch has no CUDA)
        q = t(2, 3, 5, 64)
        seen = []
        ops = attnlab.ops
        real = ops.attention_kernel, ops._autocast_on, ops._autocast_dtype
        try:
            ops.attention_kernel = lambda *a: seen.append([x.dtype for x in a[:3]])
            ops._autocast_on, ops._autocast_dtype = (lambda: True), (lambda: torch.bfloat16)
            attnlab.attention(q, q, q.bfloat16(), causal=True)
            ops._autocast_dtype = lambda: torch.float16
            self.check(TypeError, ["autocast", "float16", "bfloat16"], attnlab.attention, q, q, q)
            ops._autocast_on = lambda: False
            attnlab.attention(q, q, q)
        finally:
            ops.attention_kernel, ops._autocast_on, ops._autocast_dtype = real
        self.assertEqual(seen, [[torch.bfloat16] * 3, [torch.float32] * 3])

    def test_bf16_fake_lse_is_float32(self):  # the operator's fake (torch.compile) gives lse in float32 whatever q is
        b = torch.empty(2, 3, 5, 64, dtype=torch.bfloat16, device="meta")
        o, lse = attnlab.op._fake_with_lse(b, b, b, True)
        self.assertEqual((o.dtype, lse.dtype, tuple(lse.shape)), (torch.bfloat16, torch.float32, (2, 3, 5)))

    def test_rank(self):
        self.check(ValueError, ["v:", "3 dimensions", "expected 4"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 4, 32), t(1, 4, 32))

    def test_not_contiguous(self):
        q = t(1, 4, 2, 32).transpose(1, 2)
        self.check(ValueError, ["q:", "not contiguous", "q.contiguous()"], attnlab.attention, q, t(1, 2, 4, 32), t(1, 2, 4, 32))

    def test_k_v_differ(self):
        self.check(ValueError, ["k and v", "differ"], attnlab.attention, t(1, 2, 4, 32), t(1, 2, 4, 32), t(1, 2, 5, 32))

    def test_heads_mismatch(self):
        self.check(ValueError, ["k:", "does not fit q", "heads"], attnlab.attention, t(1, 2, 4, 32), t(1, 3, 4, 32), t(1, 3, 4, 32))

    def test_head_dim(self):
        self.check(ValueError, ["q:", "head_dim", "80", "32, 64, 96, 128"], attnlab.attention, t(1, 1, 4, 80), t(1, 1, 4, 80),
                   t(1, 1, 4, 80))

    def test_no_keys(self):
        self.check(ValueError, ["k:", "0 keys"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 0, 32), t(1, 1, 0, 32))

    def test_causal_not_bool(self):
        self.check(TypeError, ["causal:", "bool"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 4, 32), t(1, 1, 4, 32), causal="yes")

    def test_device(self):  # everything else right, Sq ≠ Sk: only the device is wrong
        self.check(ValueError, ["q:", "is on cpu", "CUDA"], attnlab.attention, t(2, 3, 5, 64), t(2, 3, 9, 64), t(2, 3, 9, 64))

    def test_requires_grad_goes_through_the_op(self):  # differentiable: no refusal, the op's kernel checks the device
        q = t(1, 1, 4, 32).requires_grad_()
        self.check(ValueError, ["q:", "is on cpu"], attnlab.attention, q, t(1, 1, 4, 32), t(1, 1, 4, 32))

    def test_bare_kernels_refuse_grad(self):  # called directly, a bare kernel would drop the graph: refused
        q = t(1, 1, 4, 32).requires_grad_()
        x = t(1, 1, 4, 32)
        for fn, args in ((attnlab.ops.attention_kernel, (q, x, x)), (attnlab.attention_with_lse, (q, x, x)),
                         (attnlab.attention_backward, (q, x, x, x, x, t(1, 1, 4)))):
            self.check(ValueError, ["q:", "requires grad", "no backward", "attnlab.attention"], fn, *args)
        self.check(ValueError, ["q:", "requires grad", "no backward"], attnlab.decode, t(1, 1, 1, 32).requires_grad_(),
                   x, x, 4)
        self.check(ValueError, ["x:", "requires grad"], attnlab.softmax, q)


class BackwardChecks(Raises):
    """attnlab.attention_backward(q, k, v, o, dout, lse, causal): each argument named."""
    q, kv = t(2, 3, 5, 64), t(2, 3, 9, 64)

    def args(self, **change):
        a = dict(q=self.q, k=self.kv, v=self.kv, o=t(2, 3, 5, 64), dout=t(2, 3, 5, 64), lse=t(2, 3, 5))
        a.update(change)
        return a

    def test_o_shape(self):
        self.check(ValueError, ["o:", "differs from q's", "forward's output"], attnlab.attention_backward,
                   **self.args(o=t(2, 3, 9, 64)))

    def test_dout_shape(self):
        self.check(ValueError, ["dout:", "(2, 3, 5, 32)", "output's gradient"], attnlab.attention_backward,
                   **self.args(dout=t(2, 3, 5, 32)))

    def test_dout_not_contiguous(self):
        self.check(ValueError, ["dout:", "not contiguous"], attnlab.attention_backward,
                   **self.args(dout=t(2, 5, 3, 64).transpose(1, 2)))

    def test_dout_dtype(self):
        self.check(TypeError, ["dout:", "float64"], attnlab.attention_backward, **self.args(dout=t(2, 3, 5, 64).double()))

    def test_bf16_o_float32(self):  # a bf16 backward takes o and dout in bf16, lse in float32
        b = lambda *s: t(*s, dtype=torch.bfloat16)  # noqa: E731
        self.check(TypeError, ["o:", "float32", "q is torch.bfloat16"], attnlab.attention_backward,
                   **self.args(q=b(2, 3, 5, 64), k=b(2, 3, 9, 64), v=b(2, 3, 9, 64), dout=b(2, 3, 5, 64)))

    def test_bf16_lse_not_float32(self):
        b = lambda *s: t(*s, dtype=torch.bfloat16)  # noqa: E731
        self.check(TypeError, ["lse:", "bfloat16", "float32"], attnlab.attention_backward,
                   **self.args(q=b(2, 3, 5, 64), k=b(2, 3, 9, 64), v=b(2, 3, 9, 64), o=b(2, 3, 5, 64), dout=b(2, 3, 5, 64),
                               lse=b(2, 3, 5)))

    def test_lse_rank(self):
        self.check(ValueError, ["lse:", "4 dimensions", "[batch, heads, Sq]"], attnlab.attention_backward,
                   **self.args(lse=t(2, 3, 5, 1)))

    def test_lse_shape(self):
        self.check(ValueError, ["lse:", "(2, 3, 9)", "one per row"], attnlab.attention_backward, **self.args(lse=t(2, 3, 9)))

    def test_shapes_of_q_k_v(self):
        self.check(ValueError, ["q:", "head_dim", "80"], attnlab.attention_backward,
                   **self.args(q=t(2, 3, 5, 80), k=t(2, 3, 9, 80), v=t(2, 3, 9, 80), o=t(2, 3, 5, 80), dout=t(2, 3, 5, 80)))

    def test_causal_not_bool(self):
        self.check(TypeError, ["causal:", "bool"], attnlab.attention_backward, causal=1, **self.args())

    def test_device(self):  # everything else right: only the device is wrong
        self.check(ValueError, ["q:", "is on cpu"], attnlab.attention_backward, causal=True, **self.args())

    def test_with_lse_device(self):
        self.check(ValueError, ["q:", "is on cpu"], attnlab.attention_with_lse, self.q, self.kv, self.kv, True)


class PagedDecodeChecks(Raises):  # Task 5's paged part: q [B, H_q, D], pools [pages, page_size, H_kv, D], host tables
    bf = torch.bfloat16
    q, pool = t(2, 8, 64, dtype=bf), t(10, 16, 2, 64, dtype=bf)
    table, lengths = torch.zeros(2, 3, dtype=torch.int32), torch.tensor([5, 40])

    def test_dtype(self):  # the part is bf16
        self.check(TypeError, ["q:", "float32", "bfloat16"], attnlab.paged_decode, self.q.float(), self.pool, self.pool,
                   self.table, self.lengths)

    def test_pool_rank(self):
        self.check(ValueError, ["k_pages:", "3 dimensions", "[num_pages, page_size, kv heads, head_dim]"], attnlab.paged_decode,
                   self.q, t(10, 16, 64, dtype=self.bf), self.pool, self.table, self.lengths)

    def test_pools_differ(self):
        self.check(ValueError, ["v_pages:", "differs from k_pages"], attnlab.paged_decode, self.q, self.pool,
                   t(11, 16, 2, 64, dtype=self.bf), self.table, self.lengths)

    def test_group(self):  # H_q a multiple of H_kv
        self.check(ValueError, ["q:", "6 query heads", "4 KV heads"], attnlab.paged_decode, t(2, 6, 64, dtype=self.bf),
                   t(10, 16, 4, 64, dtype=self.bf), t(10, 16, 4, 64, dtype=self.bf), self.table, self.lengths)

    def test_head_dim(self):
        p = t(10, 16, 2, 32, dtype=self.bf)
        self.check(ValueError, ["q:", "head_dim 32", "(64, 128)"], attnlab.paged_decode, t(2, 8, 32, dtype=self.bf), p, p,
                   self.table, self.lengths)

    def test_page_size(self):
        p = t(4, 48, 2, 64, dtype=self.bf)
        self.check(ValueError, ["k_pages:", "page_size 48", "power of two"], attnlab.paged_decode, self.q, p, p, self.table,
                   self.lengths)

    def test_table_dtype(self):
        self.check(TypeError, ["page_table:", "float32", "integers"], attnlab.paged_decode, self.q, self.pool, self.pool,
                   self.table.float(), self.lengths)

    def test_table_rows(self):
        self.check(ValueError, ["lengths:", "3 rows", "batch of 2"], attnlab.paged_decode, self.q, self.pool, self.pool,
                   self.table, [1, 2, 3])

    def test_device(self):  # everything else right (lists for the tables): only the device is wrong
        self.check(ValueError, ["q:", "is on cpu", "CUDA"], attnlab.paged_decode, self.q, self.pool, self.pool,
                   [[0, 1, 2], [3, 4, 5]], [5, 40])

    def test_fake_gives_q_shape(self):  # the operator's fake (torch.compile) runs the shape checks alone
        from attnlab import op
        self.assertEqual(op._fake_paged(self.q, self.pool, self.pool, self.table, self.lengths).shape, self.q.shape)


class DecodeChecks(Raises):
    q, kc = t(2, 4, 1, 64), t(2, 4, 16, 64)

    def test_more_than_one_query(self):
        self.check(ValueError, ["q:", "2 queries"], attnlab.decode, t(2, 4, 2, 64), self.kc, self.kc, 3)

    def test_caches_differ(self):
        self.check(ValueError, ["k_cache and v_cache", "differ"], attnlab.decode, self.q, self.kc, t(2, 4, 17, 64), 3)

    def test_cache_does_not_fit_q(self):
        self.check(ValueError, ["k_cache:", "does not fit q"], attnlab.decode, self.q, t(2, 4, 16, 32), t(2, 4, 16, 32), 3)

    def test_cache_rank(self):
        self.check(ValueError, ["k_cache:", "3 dimensions"], attnlab.decode, self.q, t(2, 16, 64), self.kc, 3)

    def test_cache_dtype(self):
        self.check(TypeError, ["v_cache:", "float64"], attnlab.decode, self.q, self.kc, self.kc.double(), 3)

    def test_length_zero(self):
        self.check(ValueError, ["lengths:", "0", "outside 1 … max_seq (16)"], attnlab.decode, self.q, self.kc, self.kc, 0)

    def test_length_past_cache(self):
        self.check(ValueError, ["lengths:", "17", "max_seq (16)"], attnlab.decode, self.q, self.kc, self.kc, 17)

    def test_one_length_past_cache(self):
        self.check(ValueError, ["lengths:", "sequence 1"], attnlab.decode, self.q, self.kc, self.kc, [3, 40])

    def test_lengths_count(self):
        self.check(ValueError, ["lengths:", "3 given for a batch of 2"], attnlab.decode, self.q, self.kc, self.kc, [1, 2, 3])

    def test_lengths_float(self):
        self.check(TypeError, ["lengths:", "float"], attnlab.decode, self.q, self.kc, self.kc, 2.5)

    def test_lengths_bool(self):
        self.check(TypeError, ["lengths:", "bool"], attnlab.decode, self.q, self.kc, self.kc, True)

    def test_lengths_float_tensor(self):
        self.check(TypeError, ["lengths:", "torch.float32"], attnlab.decode, self.q, self.kc, self.kc, torch.tensor([1.0, 2.0]))

    def test_lengths_2d_tensor(self):
        self.check(ValueError, ["lengths:", "2 dimensions"], attnlab.decode, self.q, self.kc, self.kc, torch.ones(2, 1, dtype=torch.long))

    def test_device(self):  # per-sequence lengths as a tensor, all valid: only the device is wrong
        self.check(ValueError, ["q:", "is on cpu"], attnlab.decode, self.q, self.kc, self.kc, torch.tensor([3, 16]))

    def test_one_length_one_call(self):  # the lengths the library gets: one int (one launch) unless they differ
        from attnlab import _checks
        self.assertEqual(_checks.lengths_of(5, 2, 16), 5)
        self.assertEqual(_checks.lengths_of([7, 7], 2, 16), 7)
        self.assertEqual(_checks.lengths_of(torch.tensor(9), 3, 16), 9)
        self.assertEqual(_checks.lengths_of((3, 16), 2, 16), [3, 16])
        self.assertEqual(_checks.lengths_of(torch.tensor([1, 2, 2]), 3, 16), [1, 2, 2])


class SoftmaxGemmChecks(Raises):
    def test_softmax_scalar(self):
        self.check(ValueError, ["x:", "0-dimensional"], attnlab.softmax, torch.tensor(1.0))

    def test_softmax_no_columns(self):
        self.check(ValueError, ["x:", "last dimension is 0"], attnlab.softmax, t(3, 0))

    def test_softmax_dtype(self):
        self.check(TypeError, ["x:", "bfloat16"], attnlab.softmax, t(3, 4, dtype=torch.bfloat16))

    def test_softmax_not_contiguous(self):
        self.check(ValueError, ["x:", "not contiguous"], attnlab.softmax, t(4, 6)[:, ::2])

    def test_softmax_device(self):
        self.check(ValueError, ["x:", "is on cpu"], attnlab.softmax, t(3, 4, 5))

    def test_gemm_rank(self):
        self.check(ValueError, ["a:", "1 dimensions", "[M, K]"], attnlab.gemm, t(4), t(4, 2))

    def test_gemm_ranks_differ(self):
        self.check(ValueError, ["b:", "but a has 3"], attnlab.gemm, t(2, 3, 4), t(4, 5))

    def test_gemm_batch(self):
        self.check(ValueError, ["b:", "batch 3", "a's 2"], attnlab.gemm, t(2, 3, 4), t(3, 4, 5))

    def test_gemm_inner(self):
        self.check(ValueError, ["b:", "[K, N]", "K = 4"], attnlab.gemm, t(3, 4), t(5, 6))

    def test_gemm_nt_inner(self):
        self.check(ValueError, ["b:", "[N, K]", "K = 4"], attnlab.gemm, t(3, 4), t(4, 6), transpose_b=True)

    def test_gemm_transpose_not_bool(self):
        self.check(TypeError, ["transpose_b:", "bool"], attnlab.gemm, t(3, 4), t(4, 6), transpose_b=1)

    def test_gemm_device(self):
        self.check(ValueError, ["a:", "is on cpu"], attnlab.gemm, t(2, 3, 4), t(2, 5, 4), transpose_b=True)


class CustomOp(Raises):
    def test_registered(self):
        for name in ("attention", "attention_forward", "attention_with_lse", "attention_backward"):
            self.assertTrue(hasattr(torch.ops.attnlab, name), name)
        want = "torch.library.custom_op" if hasattr(torch.library, "register_autograd") else "torch.library.Library"
        self.assertEqual(attnlab.REGISTERED_WITH, want)

    def test_fake_shape(self):  # the Meta/fake kernel: Sq ≠ Sk, output shaped as q
        q, k = torch.empty(2, 4, 5, 64, device="meta"), torch.empty(2, 4, 9, 64, device="meta")
        for causal in (False, True):
            o = torch.ops.attnlab.attention(q, k, k, causal)
            self.assertEqual((o.shape, o.device.type, o.dtype), (q.shape, "meta", torch.float32))

    def test_fake_shapes_of_the_backward_ops(self):
        m = lambda *shape: torch.empty(*shape, device="meta")  # noqa: E731
        q, k = m(2, 4, 5, 64), m(2, 4, 9, 64)
        o, lse = torch.ops.attnlab.attention_with_lse(q, k, k, True)
        self.assertEqual((o.shape, lse.shape, lse.device.type), (q.shape, (2, 4, 5), "meta"))
        dq, dk, dv = torch.ops.attnlab.attention_backward(q, k, k, o, o, lse, True)
        self.assertEqual((dq.shape, dk.shape, dv.shape), (q.shape, k.shape, k.shape))
        self.check(ValueError, ["lse:", "one per row"], torch.ops.attnlab.attention_backward, q, k, k, o, o, m(2, 4, 9), True)

    def test_fake_checks_shapes(self):
        q = torch.empty(2, 4, 5, 80, device="meta")
        self.check(ValueError, ["head_dim", "80"], torch.ops.attnlab.attention, q, q, q, False)

    def test_cpu_device_error(self):
        self.check(ValueError, ["q:", "is on cpu"], attnlab.attention_op, t(1, 2, 3, 32), t(1, 2, 3, 32), t(1, 2, 3, 32))

    def test_bare_forward_op_has_no_backward(self):  # an error (at the call or at backward), never zero gradients
        q = t(1, 2, 3, 32).requires_grad_()
        with Standins():
            with self.assertRaises((RuntimeError, ValueError)) as cm:
                torch.ops.attnlab.attention_forward(q, t(1, 2, 3, 32), t(1, 2, 3, 32), False).sum().backward()
        self.assertRegex(str(cm.exception), "no backward|no autograd formula")


def visible(Sq, Sk, causal):
    """[Sq, Sk] bool: key j visible to query i (causal bottom-right: j ≤ i + Sk − Sq)."""
    if not causal:
        return torch.ones(Sq, Sk, dtype=torch.bool)
    return torch.arange(Sk)[None, :] <= torch.arange(Sq)[:, None] + (Sk - Sq)


def oracle64(q, k, v, causal):
    """float64 attention for autograd: rows that see no key are 0 with zero gradients (no NaN)."""
    D = q.shape[-1]
    s = q.double() @ k.double().transpose(-1, -2) / D ** 0.5
    vis = visible(q.shape[2], k.shape[2], causal)
    has_key = vis.any(-1, keepdim=True)
    s = s.masked_fill(~vis, float("-inf"))
    s = torch.where(has_key, s, torch.zeros_like(s))  # a row with no key: any finite row, zeroed below
    return (torch.softmax(s, -1) * has_key) @ v.double()


class Standins:
    """The three kernels replaced by float64 torch on the CPU (FlashAttention-2's formulas: P recomputed from
    lse, D_i = rowsum(dO ∘ O), dS = P ∘ (dP − D_i)), counting their calls. This tests the bridge's wiring —
    the operators, the routing, the autograd formula — never the kernels (python/tests/test_bridge_gpu.py does)."""

    def __enter__(self):
        from unittest import mock
        self.calls = {"forward": 0, "with_lse": 0, "backward": 0, "decode": 0}
        self.patches = [mock.patch.object(attnlab.ops, "attention_kernel", self.forward),
                        mock.patch.object(attnlab.backward, "attention_with_lse", self.with_lse),
                        mock.patch.object(attnlab.backward, "attention_backward", self.backward),
                        mock.patch.object(attnlab.ops, "decode", self.decode)]
        for p in self.patches:
            p.start()
        return self

    def __exit__(self, *exc):
        for p in self.patches:
            p.stop()

    @staticmethod
    def scores(q, k, causal):
        s = q.double() @ k.double().transpose(-1, -2) / q.shape[-1] ** 0.5
        return s.masked_fill(~visible(q.shape[2], k.shape[2], causal), float("-inf"))

    def lse_forward(self, q, k, v, causal):
        s = self.scores(q, k, causal)
        lse = torch.logsumexp(s, -1)
        lse = lse.masked_fill(lse == float("-inf"), float("inf"))  # task4_backward.h: +inf for a row with no key
        return torch.exp(s - lse[..., None]) @ v.double(), lse

    def forward(self, q, k, v, causal=False):
        self.calls["forward"] += 1
        return self.lse_forward(q, k, v, causal)[0].float()

    def with_lse(self, q, k, v, causal=False):
        self.calls["with_lse"] += 1
        o, lse = self.lse_forward(q, k, v, causal)
        return o.float(), lse.float()

    def backward(self, q, k, v, o, dout, lse, causal=False):
        self.calls["backward"] += 1
        assert dout.is_contiguous()
        q64, k64, v64, o64, do64 = (x.double() for x in (q, k, v, o, dout))
        p = torch.exp(self.scores(q, k, causal) - lse.double()[..., None])
        ds = p * (do64 @ v64.transpose(-1, -2) - (do64 * o64).sum(-1, keepdim=True))
        scale = q.shape[-1] ** -0.5
        return (ds @ k64 * scale).float(), (ds.transpose(-1, -2) @ q64 * scale).float(), (p.transpose(-1, -2) @ do64).float()

    def decode(self, q, k, v, lengths):
        self.calls["decode"] += 1
        return self.forward(q, k[:, :, :lengths], v[:, :, :lengths])


def leaves(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g).requires_grad_() for shape in shapes]


class Autograd(Raises):
    """attnlab.attention and torch.ops.attnlab.attention under autograd, on the CPU with Standins."""

    def grads_match(self, fn, B, H, Sq, Sk, D, causal, transpose_out=False):
        q, k, v = leaves((B, H, Sq, D), (B, H, Sk, D), (B, H, Sk, D), seed=Sq * 1000 + Sk)
        g = torch.randn(B, Sq, H, D) if transpose_out else torch.randn(B, H, Sq, D)
        o = fn(q, k, v, causal)
        loss = ((o.transpose(1, 2) if transpose_out else o) * g).sum()  # transposed: the gradient arrives strided
        got = torch.autograd.grad(loss, (q, k, v))
        q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
        o64 = oracle64(q64, k64, v64, causal)
        want = torch.autograd.grad(((o64.transpose(1, 2) if transpose_out else o64) * g.double()).sum(), (q64, k64, v64))
        for name, a, b in zip("qkv", got, want):
            self.assertEqual(a.dtype, torch.float32)
            self.assertTrue(torch.allclose(a.double(), b, atol=1e-5, rtol=1e-5),
                            f"d{name} Sq={Sq} Sk={Sk} causal={causal}: max error {(a.double() - b).abs().max().item():.3g}")
        if causal and Sq > Sk:  # the first Sq − Sk rows see no key: zero gradient
            self.assertEqual(got[0][:, :, :Sq - Sk].abs().max().item(), 0.0)

    def test_gradients(self):
        with Standins() as st:
            for fn in (attnlab.attention, torch.ops.attnlab.attention):
                for Sq, Sk, causal, tr in ((5, 5, False, False), (7, 3, True, False), (3, 7, True, True), (1, 9, True, False),
                                           (6, 6, True, True)):
                    self.grads_match(fn, 2, 3, Sq, Sk, 32, causal, tr)
        self.assertEqual(st.calls["forward"], 0)
        self.assertEqual(st.calls["with_lse"], st.calls["backward"])

    def test_grouped_query_attention(self):
        """enable_gqa: 4 query heads on 2 K/V heads (GQA) and on 1 (MQA), forward and gradients against float64 with
        K and V repeated; unmasked calls and single queries fold each group into one query (one kernel call on
        H_kv heads, K and V not copied), causal prompts repeat K and V."""
        for H_kv in (2, 1):
            for Sq, Sk, causal, folded in ((5, 7, False, True), (1, 9, True, True), (4, 4, True, False), (6, 3, True, False)):
                q, k, v = leaves((2, 4, Sq, 32), (2, H_kv, Sk, 32), (2, H_kv, Sk, 32), seed=Sq * 100 + Sk)
                seen = []
                real = Standins.lse_forward
                with Standins() as st:
                    st.lse_forward = lambda q_, k_, v_, c_: seen.append((tuple(q_.shape), tuple(k_.shape), c_)) or real(st, q_, k_, v_, c_)
                    with torch.no_grad():
                        o = attnlab.attention(q, k, v, causal=causal, enable_gqa=True)
                    got = torch.autograd.grad((attnlab.attention(q, k, v, causal=causal, enable_gqa=True) ** 2).sum(), (q, k, v))
                g = 4 // H_kv
                want_shape = ((2, H_kv, g * Sq, 32), (2, H_kv, Sk, 32), False) if folded else ((2, 4, Sq, 32), (2, 4, Sk, 32), True)
                self.assertEqual(seen, [want_shape, want_shape], f"H_kv={H_kv} Sq={Sq} causal={causal}")
                q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
                o64 = oracle64(q64, k64.repeat_interleave(g, 1), v64.repeat_interleave(g, 1), causal)
                want = torch.autograd.grad((o64 ** 2).sum(), (q64, k64, v64))
                self.assertTrue(torch.allclose(o.double(), o64.detach(), atol=1e-5, rtol=1e-5))
                for name, a, b in zip("qkv", got, want):
                    self.assertEqual(a.shape, b.shape)
                    self.assertTrue(torch.allclose(a.double(), b, atol=1e-5, rtol=1e-5),
                                    f"d{name} H_kv={H_kv} Sq={Sq} Sk={Sk} causal={causal}: {(a.double() - b).abs().max().item():.3g}")

    def test_routing(self):
        q, k, v = leaves((1, 2, 4, 32), (1, 2, 4, 32), (1, 2, 4, 32))
        with Standins() as st:
            with torch.no_grad():
                attnlab.attention(q, k, v, causal=True)
                torch.ops.attnlab.attention(q, k, v, True)
            self.assertEqual((st.calls["forward"], st.calls["with_lse"]), (2, 0))
            o = torch.ops.attnlab.attention(q.detach(), k, v.detach(), True)  # one input requiring grad is enough
            self.assertTrue(o.requires_grad)
            self.assertEqual(st.calls["with_lse"], 1)
            o.sum().backward()
            self.assertEqual((st.calls["backward"], q.grad, v.grad is None), (1, None, True))
            self.assertEqual(k.grad.shape, k.shape)

    def test_lse_is_not_differentiable(self):
        q, k, v = leaves((1, 2, 4, 32), (1, 2, 6, 32), (1, 2, 6, 32))
        with Standins():
            o, lse = torch.ops.attnlab.attention_with_lse(q, k, v, False)
        self.assertTrue(o.requires_grad)
        self.assertFalse(lse.requires_grad)

    def test_no_double_backward(self):
        q, k, v = leaves((1, 2, 4, 32), (1, 2, 4, 32), (1, 2, 4, 32))
        with Standins(), self.assertRaises((RuntimeError, ValueError)) as cm:  # older torch: at create_graph already
            dq, = torch.autograd.grad(attnlab.attention(q, k, v).sum() * 1.0, q, create_graph=True)
            dq.pow(2).sum().backward()
        self.assertRegex(str(cm.exception), "attention_backward.*(no backward|no autograd formula)|requires grad")

    def test_compile_fullgraph_forward_and_backward(self):
        if attnlab.REGISTERED_WITH != "torch.library.custom_op":
            self.skipTest(f"torch {torch.__version__}: torch.compile with custom ops needs torch ≥ 2.4")
        import torch._dynamo as dynamo
        for fn in (lambda q, k, v: torch.ops.attnlab.attention(q * 2.0, k, v, True).sin().sum(),
                   lambda q, k, v: attnlab.attention(q * 2.0, k, v, causal=True).sin().sum()):
            dynamo.reset()
            q, k, v = leaves((2, 2, 9, 32), (2, 2, 5, 32), (2, 2, 5, 32))
            with Standins() as st:
                got = torch.autograd.grad(torch.compile(fn, fullgraph=True, backend="aot_eager")(q, k, v), (q, k, v))
                self.assertEqual((st.calls["with_lse"] > 0, st.calls["backward"] > 0, st.calls["forward"]), (True, True, 0))
            q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
            want = torch.autograd.grad((oracle64(q64 * 2.0, k64, v64, True).sin().sum()), (q64, k64, v64))
            for a, b in zip(got, want):
                self.assertTrue(torch.allclose(a.double(), b, atol=1e-5, rtol=1e-5))


class HuggingFaceAdapter(Raises):
    class Module:
        is_causal = True

    def test_dropout(self):
        self.check(ValueError, ["dropout:", "eval()", "attn_pdrop"], hf.attention_forward, self.Module(), t(1, 2, 3, 32),
                   t(1, 2, 3, 32), t(1, 2, 3, 32), None, dropout=0.1)

    def test_training_goes_through_the_differentiable_op(self):
        """Inputs that require grad: Task 4c's forward and backward, even for one query (decode has no backward);
        GQA's K/V heads get their gradients summed over their query heads. A GQA decode step runs Task 4's kernel
        with each K/V head's query heads as one query (no decode call, no repeat); an MHA one Task 5's decode."""
        q, k, v = leaves((1, 4, 1, 32), (1, 2, 5, 32), (1, 2, 5, 32))
        with Standins() as st:
            with torch.no_grad():
                hf.attention_forward(self.Module(), q, k, v, None)
                self.assertEqual((st.calls["forward"], st.calls["decode"]), (1, 0))
                hf.attention_forward(self.Module(), q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), None)
            self.assertEqual((st.calls["decode"], st.calls["with_lse"]), (1, 0))
            out, _ = hf.attention_forward(self.Module(), q, k, v, None)
            out.sum().backward()
        self.assertEqual((st.calls["decode"], st.calls["with_lse"], st.calls["backward"]), (1, 1, 1))
        self.assertEqual((q.grad.shape, k.grad.shape), (q.shape, k.shape))

    def test_dtype(self):
        x = t(1, 2, 3, 32, dtype=torch.float16)
        self.check(TypeError, ["query:", "float16"], hf.attention_forward, self.Module(), x, x, x, None)

    def test_padding_mask_refused(self):
        allowed = torch.ones(4, 4, dtype=torch.bool).tril()
        allowed[:, 0] = False  # the first position is padding
        self.check(ValueError, ["attention_mask:", "padding"], hf._mask_is_causal, allowed[None, None], 4, 4)

    def test_causal_masks_recognised(self):
        Sq, Sk = 3, 7  # bottom-right: query i sees keys 0 … i + 4, as with a KV cache
        allowed = torch.arange(Sk)[None, :] <= torch.arange(Sq)[:, None] + (Sk - Sq)
        self.assertTrue(hf._mask_is_causal(allowed[None, None], Sq, Sk))
        additive = torch.zeros(1, 1, Sq, Sk).masked_fill(~allowed, torch.finfo(torch.float32).min)
        self.assertTrue(hf._mask_is_causal(additive, Sq, Sk))
        self.assertFalse(hf._mask_is_causal(torch.zeros(1, 1, Sq, Sk), Sq, Sk))

    def test_scaling(self):
        class GPT2Like:
            scale_attn_weights, scale_attn_by_inverse_layer_idx, layer_idx = True, True, 3
        self.assertAlmostEqual(hf._scaling(GPT2Like(), None, 64), 1 / 8 / 4)
        self.assertAlmostEqual(hf._scaling(self.Module(), 0.5, 64), 0.5)
        self.assertAlmostEqual(hf._scaling(self.Module(), None, 64), 1 / 8)

    def test_gqa_reaches_the_device_check(self):  # 4 query heads on 2 K/V heads: repeated, then refused for the CPU
        self.check(ValueError, ["is on cpu"], hf.attention_forward, self.Module(), t(1, 4, 3, 32), t(1, 2, 3, 32), t(1, 2, 3, 32), None)


class Library(unittest.TestCase):
    def test_missing_library_says_how_to_build(self):
        code = "import attnlab, torch; attnlab.load()"
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), ATTNLAB_LIB="", ATTNLAB_IMPL="no-such-impl")
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("FileNotFoundError", run.stderr)
        self.assertIn("make python IMPL=no-such-impl", run.stderr)

    def test_builds_and_reports_cxx_errors(self):
        """make python IMPL=reference (the kit: skeleton) builds; the library loads without a GPU; a C++
        exception or CUDA error comes back as RuntimeError with its message (no crash)."""
        run = subprocess.run(["make", "--no-print-directory", "python", f"IMPL={IMPL}"], cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:])
        path = os.path.join(ROOT, "build", IMPL, "python", "libattnlab.so")
        code = f"""
import ctypes, attnlab
from attnlab import _library
assert attnlab.impl() == {IMPL!r}, attnlab.impl()
# head_dim 80 with null pointers: refused by the launcher, or (no GPU) by cudaSetDevice — either way a message
for name, args in (("attention", (None,) * 4), ("attention_lse", (None,) * 5), ("attention_backward", (None,) * 9)):
    try:
        _library.call(name, 0, 0, *args, 1, 1, 4, 4, 80, 0)
    except RuntimeError as e:
        print("RuntimeError:", e)
"""
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), ATTNLAB_LIB=path)
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        for who in ("flash_attention_forward", "flash_attention_forward_lse", "flash_attention_backward"):
            self.assertIn(f"RuntimeError: {who}:", run.stdout)
        lib = ctypes.CDLL(path)
        for name in list(_library._SIGNATURES) + ["abi_version", "impl", "last_error", "device_count", "synchronize"]:
            self.assertTrue(hasattr(lib, "attnlab_" + name), name)


class Package(unittest.TestCase):
    """python/pyproject.toml: `pip install -e python/` and the wheel `make python` writes, each into a fresh venv
    (Debian's torch seen through --system-site-packages), offline; `import attnlab` there without PYTHONPATH finds
    its library: the checkout's build/<impl>/python/libattnlab.so, or the one inside the wheel."""

    @classmethod
    def setUpClass(cls):
        run = subprocess.run(["make", "--no-print-directory", "python", f"IMPL={IMPL}"], cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    def install(self, *what):
        """A venv with `what` pip-installed into it; returns its python."""
        import tempfile
        venv = tempfile.mkdtemp(prefix="attnlab-venv-")
        self.addCleanup(subprocess.run, ["rm", "-rf", venv])
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        run = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--disable-pip-version-check",
                              "--no-deps", "--no-index", "--no-build-isolation", *what], cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-2000:])
        return python

    def where(self, python, impl="no-such-impl"):
        """(library path, how chosen, the package's file) as `import attnlab` sees them from / without PYTHONPATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNLAB_LIB")}
        env["ATTNLAB_IMPL"] = impl
        run = subprocess.run([python, "-c", "import attnlab; print(*attnlab.library_path(), attnlab.impl(), attnlab.__file__, sep='|')"],
                             cwd="/", env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        return run.stdout.strip().split("|")

    def test_editable_install_finds_the_checkouts_library(self):
        path, how, impl, module = self.where(self.install("-e", "python/"), impl=IMPL)
        self.assertEqual((path, how, impl), (os.path.join(ROOT, "build", IMPL, "python", "libattnlab.so"), f"IMPL={IMPL}", IMPL))
        self.assertEqual(module, os.path.join(ROOT, "python", "attnlab", "__init__.py"))

    def test_wheel_carries_its_library(self):
        wheels = [f for f in os.listdir(os.path.join(ROOT, "build", IMPL, "python", "dist")) if f.endswith(".whl")]
        self.assertEqual(len(wheels), 1, wheels)
        self.assertRegex(wheels[0], r"^attnlab-[0-9.]+-py3-none-linux_[a-z0-9_]+\.whl$")  # a platform wheel: a .so inside
        python = self.install(os.path.join("build", IMPL, "python", "dist", wheels[0]))
        path, how, impl, module = self.where(python)  # ATTNLAB_IMPL names nothing here: the wheel's own library is used
        self.assertEqual((how, impl), ("in the package", IMPL))
        self.assertEqual(os.path.dirname(path), os.path.dirname(module))
        self.assertFalse(module.startswith(os.path.join(ROOT, "python")), module)


class TrainOnYourKernels(unittest.TestCase):
    """tools/vs_torch/train_attnlab.py (make train-attnlab): its model is train_model.py's, its verdict can say both
    things, and its CPU test mode runs end to end (the three runs, the JSON, the picture, --plot)."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(ROOT, "tools", "vs_torch"))
        import train_attnlab
        cls.ta = train_attnlab

    def test_model_is_train_models(self):  # CourseGPT is GPT2 with its attend() passed in
        import llm_reference
        import train_model
        torch.manual_seed(3)
        theirs = train_model.GPT2(50257, 256, 64, 2, 1).eval()
        torch.manual_seed(3)
        mine = self.ta.CourseGPT(50257, 256, 64, 2, 1, attend=llm_reference.causal_attention).eval()
        tokens = torch.randint(0, 50257, (2, 17))
        with torch.no_grad():
            self.assertTrue(torch.equal(mine(tokens), theirs(tokens)))

    def runs(self, attn_offset, attn_wiggle, noise_wiggle, steps=(10, 20, 30, 40)):
        def run(offset, wiggle):
            train = [5.0 - 0.01 * i + (offset + wiggle * (-1) ** i) for i in range(steps[-1])]
            return {"eval_steps": list(steps), "val_loss": [5.0 - s / 100 + offset + wiggle * (-1) ** (s // 10) for s in steps],
                    "train_loss": train}
        return {"sdpa": run(0.0, 0.0), "sdpa-math": run(0.0, noise_wiggle), "attnlab": run(attn_offset, attn_wiggle)}

    def test_verdict(self):
        self.assertTrue(self.ta.verdict(self.runs(0.0, 0.01, 0.01))["agree"])
        self.assertTrue(self.ta.verdict(self.runs(0.0, 0.0, 0.0))["agree"])  # all equal (the CPU test mode)
        v = self.ta.verdict(self.runs(0.1, 0.0, 0.01))  # attnlab 0.1 nats off, noise 0.01
        self.assertFalse(v["agree"])
        self.assertFalse(v["validation"]["agree"])
        self.assertIn("DIFFER", self.ta.verdict_lines(v)[-1])
        self.assertFalse(self.ta.verdict(self.runs(0.0, 0.05, 0.01))["agree"])  # a wiggle 5× the noise's
        short = self.runs(0.0, 0.0, 0.0)
        short["attnlab"]["eval_steps"], short["attnlab"]["val_loss"] = [10], [4.9]  # cut short: the common steps only
        self.assertEqual(self.ta.verdict(short)["steps"], [10])

    def test_cpu_end_to_end(self):
        self.end_to_end("float32")

    def test_cpu_end_to_end_bf16(self):  # the bf16 mode's runs, under torch.autocast on the CPU
        self.end_to_end("bf16")

    def end_to_end(self, precision):
        import json
        import tempfile
        out = tempfile.mkdtemp(prefix="train-attnlab-")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, ".deps", "py"), os.environ.get("PYTHONPATH", "")]))
        run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "vs_torch", "train_attnlab.py"), "--test", "--out", out,
                              "--precision", precision], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:])
        self.assertIn("AGREE", run.stdout)
        with open(os.path.join(out, "train_attnlab.json")) as f:
            result = json.load(f)
        self.assertEqual(result["precision"], precision)
        steps = self.ta.TEST["steps"]
        for name in self.ta.MODES[precision]["runs"]:
            r = result["runs"][name]
            self.assertEqual((r["steps_done"], len(r["train_loss"]), r["eval_steps"][-1]), (steps, steps, steps))
            self.assertTrue(all(math.isfinite(x) and 5 < x < 12 for x in r["train_loss"] + r["val_loss"]))
            self.assertGreater(r["tokens_per_s"], 0)
        self.assertTrue(result["verdict"]["agree"])
        turns = result["speed_in_turns"]  # the speed comparison in turns: attnlab and the runs it is compared with
        self.assertEqual(set(turns["median"]), {"attnlab", *self.ta.MODES[precision]["speed"]})
        self.assertTrue(all(len(v) == turns["rounds"] and min(v) > 0 for v in turns["every_round"].values()))
        self.assertIn("in turns", run.stdout)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return
        self.assertGreater(os.path.getsize(os.path.join(out, "train_attnlab.png")), 10000)
        png = os.path.join(out, "again.png")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "vs_torch", "train_attnlab.py"), "--plot",
                              os.path.join(out, "train_attnlab.json"), "--png", png], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertTrue(os.path.isfile(png))


class SpeedupsIntoResults(unittest.TestCase):
    """tools/vs_torch/torch_speedups.py's tables go into the Task 4 and Task 5 sections of a graded Results.md,
    replacing an earlier run's, leaving the rest as it was."""

    def test_put_section(self):
        sys.path.insert(0, os.path.join(ROOT, "tools", "vs_torch"))
        import torch_speedups as ts
        md = "# Results\n\n## Task 4 — fused (4 / 4)\n\n| case |\n\n## Task 5 — decode (4 / 4)\n\ntext 5\n\n## Pictures\n"
        once = ts.put_section(md, 4, ts.HEADING + "\n\nrun 1")
        twice = ts.put_section(once, 4, ts.HEADING + "\n\nrun 2")
        self.assertEqual(twice.count(ts.HEADING), 1)
        self.assertIn("run 2", twice)
        self.assertNotIn("run 1", twice)
        self.assertLess(twice.index("| case |"), twice.index(ts.HEADING))
        self.assertLess(twice.index(ts.HEADING), twice.index("## Task 5"))
        self.assertTrue(twice.endswith("text 5\n\n## Pictures\n"))
        self.assertIsNone(ts.put_section(md, 6, "x"))  # no Task 6 section: nothing written


if __name__ == "__main__":
    unittest.main()
