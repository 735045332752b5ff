"""Hugging Face transformers on the bridge's attention: registers "attnlab" with transformers'
AttentionInterface (transformers ≥ 4.48), so a model built with attn_implementation="attnlab" runs
its attention on the student's (or the reference's) kernels.

    import attnlab.hf
    attnlab.hf.register()
    model = transformers.GPT2LMHeadModel(config)            # config._attn_implementation = "attnlab",
    model = AutoModelForCausalLM.from_config(config, attn_implementation="attnlab")   # or this

What the adapter does: a prompt (Sq > 1) runs Task 4's fused kernel, causal bottom-right aligned
(right for a KV cache: query i of Sq new ones sits at position Sk − Sq + i); one new token (Sq = 1)
runs Task 5's decode kernel over the Sk cached positions. Training: when the inputs require grad, every
call runs attnlab.attention, whose backward is Task 4c's (decode has none). GQA/MQA (fewer K/V heads than query heads):
attnlab.attention with enable_gqa — a decode step runs Task 4's kernel with each K/V head's query heads as one query (no
copy of the cache); a causal prompt repeats K and V to the query heads (Task 4's kernels take one head count). Scaling: the kernels use 1/√D; another scale (a `scaling` argument, GPT-2's
scale_attn_weights / scale_attn_by_inverse_layer_idx) pre-scales q. Refused with an error, never
run wrong: a padding mask or any mask that is not plain causal, dropout > 0, a dtype other than
float32. (Also registered as the "attnlab" mask function where transformers has one: a causal mask
is then not built at all, and a padding mask is refused when the masks are made.)
"""
import math

import torch

from . import ops

NAME = "attnlab"


def _scaling(module, scaling, D):
    if scaling is not None:
        return float(scaling)
    s = 1.0 / math.sqrt(D) if getattr(module, "scale_attn_weights", True) else 1.0  # GPT-2's attributes
    if getattr(module, "scale_attn_by_inverse_layer_idx", False):
        s /= float(getattr(module, "layer_idx", 0) + 1)
    return s


def _mask_is_causal(mask, Sq, Sk):
    """True: the mask is the bottom-right causal one; False: it masks nothing. Anything else raises."""
    allowed = mask if mask.dtype == torch.bool else mask.eq(0)
    allowed = allowed[..., :Sq, :Sk]
    if bool(allowed.all()):
        return False
    i = torch.arange(Sq, device=mask.device)[:, None]
    j = torch.arange(Sk, device=mask.device)[None, :]
    if bool((allowed == (j <= i + (Sk - Sq))).all()):
        return True
    raise ValueError("attention_mask: masks more than the causal triangle (padding, a sliding window, …); "
                     "attnlab's kernels take causal or no masking: pass no padding (batch of equal lengths)")


def attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, is_causal=None, **kwargs):
    """transformers' attention-function signature: query [B, H, Sq, D], key/value [B, Hkv, Sk, D] →
    (output [B, Sq, H, D], None): no attention weights (as SDPA)."""
    if dropout and dropout > 0:
        raise ValueError(f"dropout: {dropout}; attnlab's kernels have no attention dropout (put the model in eval(), "
                         f"or train with the attention dropout at 0: attn_pdrop / attention_dropout in the config)")
    if query.dtype != torch.float32:
        raise TypeError(f"query: dtype is {query.dtype}; attnlab's kernels take float32 (load the model in torch.float32)")
    B, H, Sq, D = query.shape
    Hkv, Sk = key.shape[1], key.shape[2]
    if H % Hkv:
        raise ValueError(f"key: {Hkv} heads do not divide the query's {H}")
    s = _scaling(module, scaling, D)
    if not math.isclose(s, 1.0 / math.sqrt(D), rel_tol=1e-9):
        query = query * (s * math.sqrt(D))
    if attention_mask is not None:
        causal = _mask_is_causal(attention_mask, Sq, Sk)
    else:
        causal = bool(is_causal if is_causal is not None else getattr(module, "is_causal", True))
    q, k, v = query.contiguous(), key.contiguous(), value.contiguous()
    if Sq == 1 and Hkv == H and not (torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))):
        # one new token: it sees every cached position (causal or not), Task 5's decode kernel (no backward)
        out = ops.decode(q, k, v, Sk)
    else:  # GQA / MQA (each K/V head serves H / Hkv query heads): attention's enable_gqa, K and V not repeated for a
        # decode step nor without a mask (the group folded into one query), repeated for a causal prompt
        out = ops.attention(q, k, v, causal=causal, enable_gqa=Hkv != H)
    return out.transpose(1, 2).contiguous(), None


def _mask(*args, **kwargs):
    """The mask function for "attnlab": no mask when it is plain causal (the kernel applies it), and an
    error when it is not. Built by asking SDPA's mask function, which returns None exactly then."""
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    return ALL_MASK_ATTENTION_FUNCTIONS["sdpa"](*args, **kwargs)  # None, or a mask attention_forward checks


def register():
    """Registers "attnlab" with transformers (imported here: only this needs it). Returns the name."""
    from transformers import AttentionInterface
    AttentionInterface.register(NAME, attention_forward)
    try:
        from transformers.masking_utils import AttentionMaskInterface
    except ImportError:  # transformers < 4.53: the model builds its 4-D mask itself; attention_forward checks it
        return NAME
    AttentionMaskInterface.register(NAME, _mask)
    return NAME
