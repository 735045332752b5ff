"""Registers the bridge's attention as the torch operator attnlab::attention, so that it composes
with torch.compile (an opaque call in the graph; its fake kernel gives the output's shape).

    import attnlab                      # registers the operator (importing attnlab.op does it)
    o = torch.ops.attnlab.attention(q, k, v, True)          # or attnlab.attention_op(q, k, v, causal=True)
    torch.compile(lambda q, k, v: torch.ops.attnlab.attention(q, k, v, True))(q, k, v)

Schema: attention(Tensor q, Tensor k, Tensor v, bool causal=False) -> Tensor. torch ≥ 2.4:
torch.library.custom_op + register_fake; older torch (Debian's 1.13): torch.library.Library("attnlab",
"DEF") with the schema, the kernel for CUDA (and CPU, where it raises the device error), a Meta
kernel and an Autograd kernel that refuses inputs requiring grad. No backward is registered: gradients through it are an error, never silently zero.
"""
import torch

from . import _checks, ops

SCHEMA = "attention(Tensor q, Tensor k, Tensor v, bool causal=False) -> Tensor"
_keep = []  # the Library object must outlive the module's import on old torch


def _fake(q, k, v, causal=False):
    _checks.attention_shapes(q, k, v, causal)
    return q.new_empty(q.shape)


def _kernel(q, k, v, causal=False):
    return ops.attention(q, k, v, causal=causal)


def _below_autograd(q, k, v, causal=False):
    """Old torch's Autograd kernel: refuses inputs that require grad, else dispatches below autograd."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        raise RuntimeError("attnlab::attention has no backward: call it under torch.no_grad() or on detached tensors")
    guard = torch._C._AutoDispatchBelowAutograd()  # a scope guard on 1.13 (no `with`): active while it lives
    try:
        return torch.ops.attnlab.attention(q, k, v, causal)
    finally:
        del guard


def _register():
    if hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_fake"):  # torch ≥ 2.4
        @torch.library.custom_op("attnlab::attention", mutates_args=())
        def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
            return _kernel(q, k, v, causal)

        torch.library.register_fake("attnlab::attention")(_fake)
        return "torch.library.custom_op"
    lib = torch.library.Library("attnlab", "DEF")
    lib.define(SCHEMA)
    for key in ("CUDA", "CPU"):  # CPU: the kernel's own check says the tensors must be on CUDA
        lib.impl("attention", _kernel, key)
    lib.impl("attention", _fake, "Meta")
    lib.impl("attention", _below_autograd, "Autograd")
    _keep.append(lib)
    return "torch.library.Library"


REGISTERED_WITH = _register()


def attention_op(q, k, v, causal=False):
    """torch.ops.attnlab.attention(q, k, v, causal): attnlab.attention as a torch operator (torch.compile-able)."""
    return torch.ops.attnlab.attention(q, k, v, causal)
