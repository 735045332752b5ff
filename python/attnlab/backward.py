"""Task 4's backward bonus on torch tensors (4c in float32, task4_backward/task4_backward.h; 4d in bfloat16,
task4_bf16_backward/task4_bf16_backward.h): the forward that also returns each row's log-sum-exp, and
FlashAttention-2's backward. Bare kernels, no autograd of their own; the inputs' dtype picks the part.

    import attnlab                                          # make python IMPL=…, pip install -e python/ first
    o, lse = attnlab.attention_with_lse(q, k, v, causal=True)
    dq, dk, dv = attnlab.attention_backward(q, k, v, o, dout, lse, causal=True)
    q.requires_grad_(); attnlab.attention(q, k, v, causal=True).sum().backward()    # the same, through autograd

attnlab.attention runs these when its inputs require grad (python/attnlab/op.py registers them as the
operators attnlab::attention_with_lse and attnlab::attention_backward, with the autograd formula
between them); called directly they refuse inputs that require grad, as every bare kernel does.
Checks, errors and stream ordering (one C call each) as in ops.py. A student's skeleton raises RuntimeError naming the
TODO until 4c is written; attnlab.attention without gradients needs only Task 4.
"""
import torch

from . import _checks, _library
from ._streams import current as current_stream


def attention_with_lse(q, k, v, causal=False):
    """(o, lse) with task4::flash_attention_forward_lse (bf16: flash_attention_forward_bf16_lse): o as
    attnlab.attention; lse [B, H, Sq] float32 whatever q's dtype,
    lse[b, h, i] = log Σ_j exp(q_i·k_j / √D) over the keys row i sees (+inf for a row that sees none)."""
    device = _checks.attention(q, k, v, causal)
    B, H, Sq, D = q.shape
    o = torch.empty_like(q)
    lse = q.new_empty((B, H, Sq), dtype=torch.float32)
    if B * H * Sq:
        _library.call(_library.kernel_for("attention_lse", q), device, current_stream(device), q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                      lse.data_ptr(), B, H, Sq, k.shape[2], D, int(causal))
    return o, lse


def attention_backward(q, k, v, o, dout, lse, causal=False):
    """(dq, dk, dv) with task4::flash_attention_backward: the gradients of Σ dout ∘ attention(q, k, v) for
    the forward's o and lse (attention_with_lse's, same q, k, v and causal). dout: [B, H, Sq, D], contiguous."""
    device = _checks.attention_backward(q, k, v, o, dout, lse, causal)
    B, H, Sq, D = q.shape
    Sk = k.shape[2]
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if B * H == 0:
        return dq, dk, dv
    if Sq == 0:  # no query: nothing reaches any key
        return dq, dk.zero_(), dv.zero_()
    _library.call(_library.kernel_for("attention_backward", q), device, current_stream(device), q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                  dout.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), B, H, Sq, Sk, D, int(causal))
    return dq, dk, dv
