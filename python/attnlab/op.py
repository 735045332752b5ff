"""Registers the bridge's attention as torch operators, so that it composes with torch.compile (opaque calls
in the graph; fake kernels give the output shapes) and with autograd.

    import attnlab                      # registers the operators (importing attnlab.op does it)
    o = torch.ops.attnlab.attention(q, k, v, True)          # or attnlab.attention_op(q, k, v, causal=True)
    torch.compile(lambda q, k, v: torch.ops.attnlab.attention(q, k, v, True), fullgraph=True)(q, k, v)

The operators (namespace attnlab):

    attention(Tensor q, Tensor k, Tensor v, bool causal=False) -> Tensor
        What users call. A composite (CompositeImplicitAutograd) that chooses, as torch's SDPA does: when
        grad mode is on and an input requires grad, attention_with_lse (whose output carries the backward);
        otherwise attention_forward (Task 4's kernel, no log-sum-exp written).
    attention_forward(Tensor q, Tensor k, Tensor v, bool causal=False) -> Tensor
        task4::flash_attention_forward. No backward: gradients through it are an error, never zeros.
    attention_with_lse(Tensor q, Tensor k, Tensor v, bool causal=False) -> (Tensor, Tensor)
        task4::flash_attention_forward_lse: (o, lse). Its autograd formula saves q, k, v, o and lse and
        calls attention_backward; lse is not differentiable.
    attention_backward(Tensor q, Tensor k, Tensor v, Tensor o, Tensor dout, Tensor lse, bool causal=False)
        -> (Tensor, Tensor, Tensor)
        task4::flash_attention_backward: (dq, dk, dv). No backward of its own (no double backward).
    paged_decode(Tensor q, Tensor k_pages, Tensor v_pages, Tensor page_table, Tensor lengths) -> Tensor
        task5::paged_decode_bf16 (Task 5's paged part): decode over a paged KV cache with GQA. No backward.

torch ≥ 2.4: torch.library.custom_op, register_fake for each of the three kernels, register_autograd with
setup_context for attention_with_lse, and the composite through a torch.library.Library fragment. Older
torch (Debian's 1.13): torch.library.Library("attnlab", "DEF") with the schemas, each kernel for CUDA (and
CPU, where it raises the device error), a Meta kernel, and an Autograd kernel: attention_with_lse's applies
a torch.autograd.Function with the same setup_context and backward; the other two refuse inputs that
require grad. The kernels are looked up at each call (ops.attention_kernel, backward.attention_with_lse,
backward.attention_backward).
"""
from typing import Tuple

import torch

from . import _checks, backward, ops

SCHEMAS = {
    "attention": "attention(Tensor q, Tensor k, Tensor v, bool causal=False) -> Tensor",
    "attention_forward": "attention_forward(Tensor q, Tensor k, Tensor v, bool causal=False) -> Tensor",
    "attention_with_lse": "attention_with_lse(Tensor q, Tensor k, Tensor v, bool causal=False) -> (Tensor, Tensor)",
    "attention_backward": "attention_backward(Tensor q, Tensor k, Tensor v, Tensor o, Tensor dout, Tensor lse, "
                          "bool causal=False) -> (Tensor, Tensor, Tensor)",
    "paged_decode": "paged_decode(Tensor q, Tensor k_pages, Tensor v_pages, Tensor page_table, Tensor lengths) -> Tensor",
}
_keep = []  # the Library objects must outlive the module's import


def _route(q, k, v, causal=False):
    """attnlab::attention: the forward that saves what the backward needs only when a backward can follow."""
    if ops.needs_grad(q, k, v):
        return torch.ops.attnlab.attention_with_lse(q, k, v, causal)[0]
    return torch.ops.attnlab.attention_forward(q, k, v, causal)


# ---- the kernels and their fakes (shapes after the same checks, on meta or fake tensors) ----

def _forward(q, k, v, causal=False):
    return ops.attention_kernel(q, k, v, causal)


def _with_lse(q, k, v, causal=False):
    return backward.attention_with_lse(q, k, v, causal)


def _backward_kernel(q, k, v, o, dout, lse, causal=False):
    return backward.attention_backward(q, k, v, o, dout, lse, causal)


def _paged(q, k_pages, v_pages, page_table, lengths):
    return ops.paged_decode_kernel(q, k_pages, v_pages, page_table, lengths)


def _fake_paged(q, k_pages, v_pages, page_table, lengths):
    _checks.paged_decode_shapes(q, k_pages, v_pages, page_table, lengths)
    return q.new_empty(q.shape)


def _fake_forward(q, k, v, causal=False):
    _checks.attention_shapes(q, k, v, causal)
    return q.new_empty(q.shape)


def _fake_with_lse(q, k, v, causal=False):
    _checks.attention_shapes(q, k, v, causal)
    return q.new_empty(q.shape), q.new_empty(q.shape[:3], dtype=torch.float32)


def _fake_backward(q, k, v, o, dout, lse, causal=False):
    _checks.attention_backward_shapes(q, k, v, o, dout, lse, causal)
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


# ---- the autograd formula of attention_with_lse ----

def setup_context(ctx, inputs, output):
    q, k, v, causal = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal = causal
    ctx.mark_non_differentiable(lse)
    ctx.set_materialize_grads(False)  # lse's gradient stays None: no [B, H, Sq] of zeros made and filled every step


def backward_formula(ctx, grad_o, grad_lse):
    """dq, dk, dv from Task 4c's backward; grad_lse is None (lse is not differentiable). The gradient arriving
    from the graph may have any strides (a transpose after the attention): the kernel takes it contiguous."""
    if grad_o is None:
        return None, None, None, None
    q, k, v, o, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.attnlab.attention_backward(q, k, v, o, grad_o.contiguous(), lse, ctx.causal)
    return dq, dk, dv, None


class _Eager(torch.autograd.Function):
    """attnlab.attention outside torch.compile when autograd records the call: the kernels of attention_with_lse and
    attention_backward called straight, with the same formula. The operators' dispatch in Python costs host time a
    training step feels: 447 µs a forward and backward through them against 285 µs through this Function and 249 µs
    for SDPA's FlashAttention-2 (H100, torch 2.11, B=2 H=6 S=4,096 D=64; docs/perf.md). While torch.compile traces,
    ops.attention calls the operator instead, which the graph keeps opaque."""

    @staticmethod
    def forward(ctx, q, k, v, causal):
        o, lse = backward.attention_with_lse(q, k, v, causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, grad_o):
        q, k, v, o, lse = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True: the graph of dq, dk, dv would need a backward of the backward
            raise RuntimeError("attnlab::attention_backward has no backward (attnlab.attention has no double backward): "
                               "call torch.autograd.grad without create_graph=True")
        dq, dk, dv = backward.attention_backward(q, k, v, o, grad_o.contiguous(), lse, ctx.causal)
        return dq, dk, dv, None


def eager_attention_with_grad(q, k, v, causal):
    """o of attention(q, k, v, causal), recorded by autograd (ops.attention's path in eager mode)."""
    return _Eager.apply(q, k, v, causal)


class _WithLse(torch.autograd.Function):
    """Older torch: attention_with_lse's Autograd kernel (the same setup_context and backward as above)."""

    @staticmethod
    def forward(ctx, q, k, v, causal):
        guard = torch._C._AutoDispatchBelowAutograd()  # a scope guard on 1.13 (no `with`): active while it lives
        try:
            o, lse = torch.ops.attnlab.attention_with_lse(q, k, v, causal)
        finally:
            del guard
        setup_context(ctx, (q, k, v, causal), (o, lse))
        return o, lse

    @staticmethod
    def backward(ctx, grad_o, grad_lse):
        return backward_formula(ctx, grad_o, grad_lse)


def _refusing(name):
    """Older torch: the Autograd kernel of an operator without a backward: refuses inputs that require grad,
    else dispatches below autograd."""
    def kernel(*args):
        if ops.needs_grad(*args):
            raise RuntimeError(f"attnlab::{name} has no backward: call attnlab.attention (torch.ops.attnlab.attention), "
                               f"which has one, or call this under torch.no_grad() or on detached tensors")
        guard = torch._C._AutoDispatchBelowAutograd()
        try:
            return getattr(torch.ops.attnlab, name)(*args)
        finally:
            del guard
    return kernel


def _register():
    if all(hasattr(torch.library, f) for f in ("custom_op", "register_fake", "register_autograd")):  # torch ≥ 2.4
        T = torch.Tensor

        @torch.library.custom_op("attnlab::attention_forward", mutates_args=())
        def attention_forward(q: T, k: T, v: T, causal: bool = False) -> T:
            return _forward(q, k, v, causal)

        @torch.library.custom_op("attnlab::attention_with_lse", mutates_args=())
        def attention_with_lse(q: T, k: T, v: T, causal: bool = False) -> Tuple[T, T]:
            return _with_lse(q, k, v, causal)

        @torch.library.custom_op("attnlab::attention_backward", mutates_args=())
        def attention_backward(q: T, k: T, v: T, o: T, dout: T, lse: T, causal: bool = False) -> Tuple[T, T, T]:
            return _backward_kernel(q, k, v, o, dout, lse, causal)

        @torch.library.custom_op("attnlab::paged_decode", mutates_args=())
        def paged_decode(q: T, k_pages: T, v_pages: T, page_table: T, lengths: T) -> T:
            return _paged(q, k_pages, v_pages, page_table, lengths)

        torch.library.register_fake("attnlab::paged_decode")(_fake_paged)
        torch.library.register_fake("attnlab::attention_forward")(_fake_forward)
        torch.library.register_fake("attnlab::attention_with_lse")(_fake_with_lse)
        torch.library.register_fake("attnlab::attention_backward")(_fake_backward)
        torch.library.register_autograd("attnlab::attention_with_lse", backward_formula, setup_context=setup_context)
        lib = torch.library.Library("attnlab", "FRAGMENT")
        lib.define(SCHEMAS["attention"])
        lib.impl("attention", _route, "CompositeImplicitAutograd")
        _keep.append(lib)
        return "torch.library.custom_op"
    lib = torch.library.Library("attnlab", "DEF")
    for schema in SCHEMAS.values():
        lib.define(schema)
    for name, kernel, fake in (("attention_forward", _forward, _fake_forward), ("attention_with_lse", _with_lse, _fake_with_lse),
                               ("attention_backward", _backward_kernel, _fake_backward), ("paged_decode", _paged, _fake_paged)):
        for key in ("CUDA", "CPU"):  # CPU: the kernel's own check says the tensors must be on CUDA
            lib.impl(name, kernel, key)
        lib.impl(name, fake, "Meta")
    lib.impl("attention_forward", _refusing("attention_forward"), "Autograd")
    lib.impl("attention_backward", _refusing("attention_backward"), "Autograd")
    lib.impl("paged_decode", _refusing("paged_decode"), "Autograd")
    lib.impl("attention_with_lse", lambda q, k, v, causal=False: _WithLse.apply(q, k, v, causal), "Autograd")
    lib.impl("attention", _route, "CompositeImplicitAutograd")
    _keep.append(lib)
    return "torch.library.Library"


REGISTERED_WITH = _register()


def attention_op(q, k, v, causal=False):
    """torch.ops.attnlab.attention(q, k, v, causal): attnlab.attention as a torch operator (torch.compile-able)."""
    return torch.ops.attnlab.attention(q, k, v, causal)
