"""FlashAttention-4's CuTe kernels (`flash-attn-4`; on Hopper they are FlashAttention-3's design) beside torch's
backends, where the package is installed (`pip install flash-attn-4`; offline, from its wheels and those of its
nvidia-cutlass-dsl dependency carried to the machine).

    fn, status = fa4.load()                  # the function, or None; status says which, for the script's header
    qs, ks, vs = fa4.bshd(q, k, v)           # torch's [B, H, S, D] as FA4 lays them out, [B, S, H, D] (once, untimed)
    out = fa4.forward(fn, qs, ks, vs, causal)   # [B, S, H, D]
"""


def load():
    try:
        from flash_attn.cute.interface import flash_attn_func
    except Exception as e:  # noqa: BLE001 — not installed, or installed without what it needs
        first = str(e).splitlines()[0][:80] if str(e) else ""
        return None, f"FA4: not installed here, not timed ({type(e).__name__}: {first})"
    return flash_attn_func, "FA4: flash-attn-4 timed beside them"


def forward(fn, q, k, v, causal):
    """FA4's output for tensors in its layout, [B, S, H, D] (bshd); its log-sum-exp, where it returns one, is dropped."""
    out = fn(q, k, v, causal=causal)
    return out[0] if isinstance(out, tuple) else out


def bshd(*tensors):
    """[B, H, S, D] tensors as FA4 lays them out, [B, S, H, D], contiguous (made once, outside the timed calls)."""
    return tuple(t.transpose(1, 2).contiguous() for t in tensors)
