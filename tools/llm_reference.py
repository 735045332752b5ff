"""Independent torch references for the models of Tasks 6 and 7, used by tools/make_goldens.py.

Task 6: the same seeded weights as task6/model.cpp (the GPU's fill_uniform — a splitmix64 hash of
(seed, index) — recomputed here with numpy), and the model's forward in float64: pre-LayerNorm,
fused Q/K/V, RoPE (rotate-half, base 10000), causal attention, SwiGLU MLP, final LayerNorm, LM head.
"""
import math

import numpy as np
import torch

MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def fill_uniform(n, seed, lo, hi):
    """common/cuda/fill.cu's fill_uniform: lo + (hi − lo)·u, u = top 24 bits of the hash / 2²⁴."""
    x = np.uint64((seed * 0x632BE59BD9B4E019) & MASK64) + np.arange(n, dtype=np.uint64)
    u = (splitmix64(x) >> np.uint64(40)).astype(np.float64) / 16777216.0
    lo32, hi32 = np.float32(lo), np.float32(hi)
    span = np.float64(np.float32(hi32 - lo32))
    return torch.from_numpy((span * u + np.float64(lo32)).astype(np.float32))  # one rounding, like the GPU's fma


def tensor_seed(seed, layer, kind):
    return (seed * 1000003 + layer * 16 + kind) & MASK64


def bound(fan_in, scale=1.0):
    return float(np.float32(scale / math.sqrt(fan_in)))


def task6_weights(cfg):
    """The weights of task6/model.cpp's Weights, in the same order and from the same seeds."""
    H, F, V, L, s = cfg["hidden"], cfg["ffn"], cfg["vocab"], cfg["layers"], cfg["model_seed"]

    def u(shape, layer, kind, lo, hi):
        return fill_uniform(int(np.prod(shape)), tensor_seed(s, layer, kind), lo, hi).reshape(shape).double()

    layers = []
    for l in range(L):
        layers.append(dict(ln1_g=u([H], l, 0, 0.8, 1.2), ln1_b=u([H], l, 1, -0.1, 0.1),
                           w_qkv=u([3 * H, H], l, 2, -bound(H), bound(H)), w_o=u([H, H], l, 3, -bound(H), bound(H)),
                           ln2_g=u([H], l, 4, 0.8, 1.2), ln2_b=u([H], l, 5, -0.1, 0.1),
                           w_gu=u([2 * F, H], l, 6, -bound(H), bound(H)), w_down=u([H, F], l, 7, -bound(F), bound(F))))
    return dict(layers=layers, emb=u([V, H], L, 0, -1.0, 1.0), lnf_g=u([H], L, 1, 0.8, 1.2), lnf_b=u([H], L, 2, -0.1, 0.1),
                lm_head=u([V, H], L, 3, -bound(H, 4.0), bound(H, 4.0)))


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * g + b


def rope_tables(T, D):
    """cos and sin [T, D/2] of position · 10000^(−2i/D), rounded to float32 as the model's tables are."""
    angle = torch.tensor([[p * math.pow(10000.0, -2.0 * i / D) for i in range(D // 2)] for p in range(T)], dtype=torch.float64)
    return torch.cos(angle).float().double(), torch.sin(angle).float().double()


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def causal_attention(q, k, v):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    T = q.shape[-2]
    scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def task6_logits(wts, cfg, tokens):
    """The last position's logits [B, V] for tokens [B, T], in float64, recomputing everything."""
    B, T = tokens.shape
    H, heads = cfg["hidden"], cfg["heads"]
    D, F = H // heads, cfg["ffn"]
    cos, sin = rope_tables(T, D)
    x = wts["emb"][tokens]
    for lw in wts["layers"]:
        h = layer_norm(x, lw["ln1_g"], lw["ln1_b"])
        qkv = (h @ lw["w_qkv"].T).view(B, T, 3, heads, D).permute(2, 0, 3, 1, 4)  # [3, B, heads, T, D]
        q, k, v = rotate(qkv[0], cos, sin), rotate(qkv[1], cos, sin), qkv[2]
        o = causal_attention(q, k, v).permute(0, 2, 1, 3).reshape(B, T, H)
        x = x + o @ lw["w_o"].T
        gu = layer_norm(x, lw["ln2_g"], lw["ln2_b"]) @ lw["w_gu"].T
        x = x + (torch.nn.functional.silu(gu[..., :F]) * gu[..., F:]) @ lw["w_down"].T
    return layer_norm(x[:, -1], wts["lnf_g"], wts["lnf_b"]) @ wts["lm_head"].T


def task6_greedy(cfg, prompt, steps):
    """Greedy generation without a cache: tokens [B, steps + 1] and logits [steps + 1, B, V]."""
    wts = task6_weights(cfg)
    seq, tokens, logits = prompt.clone(), [], []
    for _ in range(steps + 1):
        lg = task6_logits(wts, cfg, seq)
        nxt = lg.argmax(-1)
        logits.append(lg)
        tokens.append(nxt)
        seq = torch.cat([seq, nxt[:, None]], dim=1)
    return torch.stack(tokens, dim=1), torch.stack(logits)
