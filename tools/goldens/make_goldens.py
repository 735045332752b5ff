#!/usr/bin/env python3
"""Writes the golden tensors every task checks against: goldens/taskN/<case>.safetensors.

Run by `make goldens` with Debian's /usr/bin/python3 (python3-torch). Inputs are drawn in float32
from a fixed seed, the expected outputs computed from those same float32 values in float64 and
stored as float32. Each file's __metadata__ holds format_version, seed, torch_version, atol, rtol
and the case's parameters. Re-running rewrites every file; `--only task1` limits it to one task.
"""
import argparse
import json
import math
import os
import struct
import sys

import torch

import llm_reference

FORMAT_VERSION = 1  # keep equal to kGoldenFormatVersion in common/golden.h
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_safetensors(path, tensors, metadata):
    """Plain safetensors writer: 8-byte header length, JSON header, then the data block."""
    header, blobs, offset = {"__metadata__": {k: str(v) for k, v in metadata.items()}}, [], 0
    for name, t in tensors.items():
        a = t.detach().to(torch.float32).contiguous().numpy()
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the data block starts 8-byte aligned
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    os.replace(tmp, path)  # never leave a half-written golden behind


class Writer:
    def __init__(self, out_dir, seed):
        self.out_dir, self.seed, self.count = out_dir, seed, 0

    def generator(self, name):
        """One generator per case, seeded from the global seed and the case name (stable order)."""
        g = torch.Generator().manual_seed(self.seed)
        g.manual_seed(self.seed ^ (hash_name(name) & 0x7FFFFFFF))
        return g

    def save(self, task, name, tensors, atol, rtol, **params):
        meta = dict(format_version=FORMAT_VERSION, seed=self.seed, torch_version=torch.__version__, atol=atol, rtol=rtol)
        meta.update({k: int(v) if isinstance(v, bool) else v for k, v in params.items()})
        write_safetensors(os.path.join(self.out_dir, task, name + ".safetensors"), tensors, meta)
        self.count += 1


def hash_name(name):
    h = 1469598103934665603  # FNV-1a: stable across runs, unlike Python's hash()
    for c in name.encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def sdpa64(q, k, v, causal):
    """Attention in float64, one (batch, head) at a time so that S×S stays small. Causal is aligned
    at the bottom right (key j visible to query i iff j <= i + Sk - Sq), as FlashAttention does."""
    out = torch.empty_like(q)
    Sq, Sk = q.shape[2], k.shape[2]
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            scores = q[b, h] @ k[b, h].T / math.sqrt(q.shape[-1])
            if causal:
                scores.masked_fill_(torch.triu(torch.ones_like(scores, dtype=torch.bool), 1 + Sk - Sq), float("-inf"))
            out[b, h] = torch.softmax(scores, dim=-1) @ v[b, h]
    return out


# --- Task 1: naive multi-head attention ------------------------------------------------------------

def task1_case(w, name, B, S, hidden, heads, causal, x_scale=1.0, steps=False, atol=2e-5, rtol=1e-4, task="task1"):
    g = w.generator(name)
    D = hidden // heads
    x = (torch.randn(B, S, hidden, generator=g) * x_scale).float()
    mha = torch.nn.MultiheadAttention(hidden, heads, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.empty(3 * hidden, hidden).uniform_(-1, 1, generator=g) * math.sqrt(6 / (4 * hidden)))
        mha.out_proj.weight.copy_(torch.empty(hidden, hidden).uniform_(-1, 1, generator=g) / math.sqrt(hidden))
    mha = mha.double()
    xd = x.double()
    wq, wk, wv = mha.in_proj_weight.detach().chunk(3)
    wo = mha.out_proj.weight.detach()
    mask = torch.triu(torch.ones(S, S, dtype=torch.bool), 1) if causal else None
    with torch.no_grad():
        out, _ = mha(xd, xd, xd, attn_mask=mask, need_weights=False)
        heads_of = lambda t: t.view(B, S, heads, D).transpose(1, 2)
        qh, kh, vh = heads_of(xd @ wq.T), heads_of(xd @ wk.T), heads_of(xd @ wv.T)
        scores = qh @ kh.transpose(-1, -2) / math.sqrt(D)
        masked = scores.masked_fill(mask, float("-inf")) if causal else scores
        probs = torch.softmax(masked, dim=-1)
        attn_heads = probs @ vh
        attn = attn_heads.transpose(1, 2).reshape(B, S, hidden)
        # our step-by-step float64 path must agree with torch's module before it is a golden
        assert torch.allclose(attn @ wo.T, out, atol=1e-10, rtol=1e-9), name
    t = dict(x=x, w_q=wq, w_k=wk, w_v=wv, w_o=wo, attn=attn, out=out)
    if steps:
        t.update(q_heads=qh, k_heads=kh, v_heads=vh, scores=scores, probs=probs, attn_heads=attn_heads)
    w.save(task, name, t, atol, rtol, B=B, S=S, hidden=hidden, heads=heads, causal=causal)


def make_task1(w):
    for causal in (False, True):
        suffix = "_causal" if causal else ""
        task1_case(w, "course" + suffix, 4, 10, 128, 8, causal, steps=True)
        task1_case(w, "s127_h256" + suffix, 2, 127, 256, 4, causal)
    task1_case(w, "s1_causal", 3, 1, 128, 8, True)
    task1_case(w, "s512_causal", 1, 512, 128, 8, True)
    # scores in the hundreds: exp() overflows float32 unless the row maximum is subtracted first
    task1_case(w, "large_scores", 2, 33, 64, 2, False, x_scale=12.0, atol=1e-3, rtol=1e-3)


# --- Task 2: CUDA softmax, GEMMs, unfused attention ------------------------------------------------

def softmax_case(w, name, shape, scale=1.0):
    g = w.generator(name)
    x = (torch.randn(*shape, generator=g) * scale).float()
    w.save("task2", name, dict(x=x, y=torch.softmax(x.double(), dim=-1)), 1e-6, 1e-4)


def gemm_case(w, name, batch, M, N, K):
    """One A, and B both as [N, K] and as its transpose [K, N]: A·B_nkᵀ and A·B_kn are the same C."""
    g = w.generator(name)
    a = torch.empty(batch, M, K).uniform_(-1, 1, generator=g)
    b_nk = torch.empty(batch, N, K).uniform_(-1, 1, generator=g)
    c = a.double() @ b_nk.double().transpose(1, 2)
    # fp32 sums of K products of size ≤ 1: rounding grows like √K
    w.save("task2", name, dict(a=a, b_nk=b_nk, b_kn=b_nk.transpose(1, 2).contiguous(), c=c), 2e-5 * math.sqrt(K), 1e-4,
           batch=batch, M=M, N=N, K=K)


def make_task2(w):
    softmax_case(w, "softmax_4x10x10", (4, 10, 10))
    softmax_case(w, "softmax_4x1000x1000", (4, 1000, 1000))
    softmax_case(w, "softmax_cols1", (5, 1))
    softmax_case(w, "softmax_cols4097", (6, 4097))
    softmax_case(w, "softmax_cols32768", (3, 32768))
    softmax_case(w, "softmax_large_scores", (64, 1000), scale=60.0)  # exp() overflows without the max
    gemm_case(w, "gemm_4x10x10", 4, 10, 10, 10)
    gemm_case(w, "gemm_4x1000x1000", 4, 1000, 1000, 1000)
    gemm_case(w, "gemm_ragged_127x129x67", 3, 127, 129, 67)
    gemm_case(w, "gemm_ragged_1x300x5", 2, 1, 300, 5)
    gemm_case(w, "gemm_ragged_257x33x1000", 1, 257, 33, 1000)
    for causal in (False, True):
        suffix = "_causal" if causal else ""
        task1_case(w, "attention_b4_s10" + suffix, 4, 10, 128, 8, causal, task="task2")
        task1_case(w, "attention_b16_s100" + suffix, 16, 100, 128, 8, causal, task="task2")


# --- Task 3: FlashAttention-2 on the CPU -----------------------------------------------------------

def task3_case(w, name, B, H, S, D, causal, atol=2e-5, rtol=1e-4):
    g = w.generator(name)
    q, k, v = (torch.randn(B, H, S, D, generator=g).float() for _ in range(3))
    out = sdpa64(q.double(), k.double(), v.double(), causal)
    w.save("task3", name, dict(q=q, k=k, v=v, out=out), atol, rtol, B=B, H=H, S=S, D=D, causal=causal)


def make_task3(w):
    for causal in (False, True):
        suffix = "_causal" if causal else ""
        task3_case(w, "course_s128" + suffix, 4, 8, 128, 16, causal)  # hidden 128, 8 heads
        task3_case(w, "s129_d32" + suffix, 2, 2, 129, 32, causal)
    task3_case(w, "s1_d64_causal", 1, 2, 1, 64, True)
    task3_case(w, "s200_d64_causal", 1, 4, 200, 64, True)
    task3_case(w, "s257_d128", 1, 2, 257, 128, False)
    task3_case(w, "s1024_d64", 1, 2, 1024, 64, False)
    task3_case(w, "course_s4096_causal", 16, 8, 4096, 16, True)  # the course's long case


# --- Task 4: fused FlashAttention kernel -----------------------------------------------------------

def task4_case(w, name, B, H, Sq, Sk, D, causal):
    g = w.generator(name)
    q = torch.randn(B, H, Sq, D, generator=g)
    k, v = (torch.randn(B, H, Sk, D, generator=g) for _ in range(2))
    out = sdpa64(q.double(), k.double(), v.double(), causal)
    w.save("task4", name, dict(q=q, k=k, v=v, out=out), 2e-5, 1e-4, B=B, H=H, Sq=Sq, Sk=Sk, D=D, causal=causal)


def make_task4(w):
    for causal in (False, True):
        suffix = "_causal" if causal else ""
        task4_case(w, "course_b4_s128" + suffix, 4, 32, 128, 128, 128, causal)  # hidden 4096, 32 heads
    task4_case(w, "s1_d64_causal", 2, 3, 1, 1, 64, True)
    task4_case(w, "s127_d32_causal", 1, 4, 127, 127, 32, True)
    task4_case(w, "s129_d96", 2, 2, 129, 129, 96, False)
    task4_case(w, "s1000_d64_causal", 1, 2, 1000, 1000, 64, True)
    task4_case(w, "bh1_s513_d128", 1, 1, 513, 513, 128, False)
    task4_case(w, "cross_q100_k300_d64", 2, 2, 100, 300, 64, False)
    task4_case(w, "cross_q77_k200_d128_causal", 1, 3, 77, 200, 128, True)
    make_task4_bf16(w)
    make_task4_backward(w)
    make_task4_bf16_backward(w)


def task4_bf16_case(w, name, B, H, Sq, Sk, D, causal):
    """Task 4's bf16 bonus: bf16 inputs (stored as the float32 values they are), attention in float64 from them.
    A query row that sees no key (causal with Sq > Sk) gets zeros, as the interface says."""
    g = w.generator(name)
    q = torch.randn(B, H, Sq, D, generator=g).bfloat16().float()
    k, v = (torch.randn(B, H, Sk, D, generator=g).bfloat16().float() for _ in range(2))
    out = torch.nan_to_num(sdpa64(q.double(), k.double(), v.double(), causal), nan=0.0)
    # the element-wise bound of task4/README.md ("Bonus: bf16 on tensor cores"); cases_bf16.cpp adds a relative L2 bound
    w.save("task4", name, dict(q=q, k=k, v=v, out=out), 4e-3, 1.6e-2, B=B, H=H, Sq=Sq, Sk=Sk, D=D, causal=causal)


def make_task4_bf16(w):
    for causal in (False, True):
        task4_bf16_case(w, "bf16_b2_h4_s256_d128" + ("_causal" if causal else ""), 2, 4, 256, 256, 128, causal)
    task4_bf16_case(w, "bf16_s1_d64_causal", 2, 3, 1, 1, 64, True)
    task4_bf16_case(w, "bf16_s127_d128_causal", 1, 4, 127, 127, 128, True)
    task4_bf16_case(w, "bf16_s129_d64", 2, 2, 129, 129, 64, False)
    task4_bf16_case(w, "bf16_bh1_s1000_d128", 1, 1, 1000, 1000, 128, False)
    task4_bf16_case(w, "bf16_cross_q100_k300_d64", 2, 2, 100, 300, 64, False)
    task4_bf16_case(w, "bf16_cross_q77_k200_d128_causal", 1, 3, 77, 200, 128, True)
    task4_bf16_case(w, "bf16_cross_q300_k100_d64_causal", 1, 2, 300, 100, 64, True)  # rows 0-199 see no key


def attention_grads64(q, k, v, dout, causal):
    """Task 4's backward bonus: O, lse and dq, dk, dv by torch's autograd in float64 (inputs as given, promoted).
    A row that sees no key (causal with Sq > Sk) gets O = 0, zero gradients and lse = +inf, as the interface says:
    its scores are set to 0 before the log-sum-exp and its P to 0 after, so that no NaN enters the graph."""
    q, k, v = (t.double().requires_grad_() for t in (q, k, v))
    Sq, Sk = q.shape[2], k.shape[2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    mask = torch.triu(torch.ones(Sq, Sk, dtype=torch.bool), 1 + Sk - Sq) if causal else torch.zeros(Sq, Sk, dtype=torch.bool)
    empty = mask.all(-1, keepdim=True)
    s = s.masked_fill(mask, float("-inf")).masked_fill(empty, 0.0)
    lse = torch.logsumexp(s, -1, keepdim=True)
    out = torch.exp(s - lse).masked_fill(empty, 0.0) @ v
    out.backward(dout.double())
    if not empty.any():  # where softmax is defined, the same numbers as sdpa64's path (torch.softmax) and its autograd
        q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
        want = sdpa64(q2, k2, v2, causal)
        want.backward(dout.double())
        for name, a, b in (("O", out, want), ("dQ", q.grad, q2.grad), ("dK", k.grad, k2.grad), ("dV", v.grad, v2.grad)):
            # two float64 computations of one thing: they differ by rounding (~1e-15 of the largest value here; 1.1e-10
            # with torch 2.11 on an H200 host's CPU, 2026-11-25); a float32 step would show ~1e-7. 1e-9 tells them apart
            # and is still 2e4 times below the float32 tolerance the golden serves
            worst = float((a.detach() - b.detach()).abs().max()) / max(1.0, float(b.detach().abs().max()))
            if worst > 1e-9:
                raise SystemExit(f"make_goldens: the backward's {name} by autograd through logsumexp and through "
                                 f"torch.softmax differ by {worst:.3g} of the largest value (rounding alone is ~1e-15 to 1e-10): "
                                 f"torch {torch.__version__} computes one of them in less than float64")
    lse = lse.squeeze(-1).detach().masked_fill(empty.squeeze(-1), float("inf"))
    return out.detach(), lse, q.grad, k.grad, v.grad


def task4_backward_case(w, name, B, H, Sq, Sk, D, causal, bf16=False):
    """Task 4's backward bonus parts: inputs q, k, v and the output's gradient dout, everything else in float64 from them.
    4c: float32 inputs; atol and rtol are the gradients' tolerance (task4_backward/README.md). 4d (bf16): the inputs
    rounded to bf16 (stored as the float32 values they are) and O rounded to bf16 as a bf16 forward hands it over; atol
    and rtol are task4_bf16_backward/README.md's element-wise bound (cases_bf16_backward.cpp adds a relative L2 one)."""
    rounded = (lambda t: t.bfloat16().float()) if bf16 else (lambda t: t)
    g = w.generator(name)
    q = rounded(torch.randn(B, H, Sq, D, generator=g))
    k, v = (rounded(torch.randn(B, H, Sk, D, generator=g)) for _ in range(2))
    dout = rounded(torch.randn(B, H, Sq, D, generator=g))
    out, lse, dq, dk, dv = attention_grads64(q, k, v, dout, causal)
    atol, rtol = (2e-2, 2e-2) if bf16 else (2e-5, 1e-4)
    w.save("task4", name, dict(q=q, k=k, v=v, dout=dout, out=rounded(out), lse=lse, dq=dq, dk=dk, dv=dv), atol, rtol,
           B=B, H=H, Sq=Sq, Sk=Sk, D=D, causal=causal)


def make_task4_backward(w):
    for causal in (False, True):
        task4_backward_case(w, "bwd_b4_h32_s128_d128" + ("_causal" if causal else ""), 4, 32, 128, 128, 128, causal)
    task4_backward_case(w, "bwd_s1_d64_causal", 2, 3, 1, 1, 64, True)
    task4_backward_case(w, "bwd_s127_d32_causal", 1, 4, 127, 127, 32, True)
    task4_backward_case(w, "bwd_s129_d96", 2, 2, 129, 129, 96, False)
    task4_backward_case(w, "bwd_s1000_d64", 1, 2, 1000, 1000, 64, False)
    task4_backward_case(w, "bwd_h3_s1000_d128_causal", 1, 3, 1000, 1000, 128, True)
    task4_backward_case(w, "bwd_h5_s513_d96_causal", 1, 5, 513, 513, 96, True)  # B·H = 5
    task4_backward_case(w, "bwd_cross_q100_k300_d64", 2, 2, 100, 300, 64, False)
    task4_backward_case(w, "bwd_cross_q77_k200_d128_causal", 1, 3, 77, 200, 128, True)
    task4_backward_case(w, "bwd_cross_q300_k100_d32_causal", 1, 2, 300, 100, 32, True)  # rows 0-199 see no key


def make_task4_bf16_backward(w):
    for causal in (False, True):
        task4_backward_case(w, "bf16bwd_b2_h8_s256_d128" + ("_causal" if causal else ""), 2, 8, 256, 256, 128, causal,
                            bf16=True)
    task4_backward_case(w, "bf16bwd_s1_d64_causal", 2, 3, 1, 1, 64, True, bf16=True)
    task4_backward_case(w, "bf16bwd_s127_d32_causal", 1, 4, 127, 127, 32, True, bf16=True)
    task4_backward_case(w, "bf16bwd_s129_d128", 2, 2, 129, 129, 128, False, bf16=True)
    task4_backward_case(w, "bf16bwd_s1000_d64_causal", 1, 2, 1000, 1000, 64, True, bf16=True)
    task4_backward_case(w, "bf16bwd_cross_q100_k300_d64", 2, 2, 100, 300, 64, False, bf16=True)
    task4_backward_case(w, "bf16bwd_cross_q77_k200_d128_causal", 1, 3, 77, 200, 128, True, bf16=True)
    task4_backward_case(w, "bf16bwd_cross_q300_k100_d32_causal", 1, 2, 300, 100, 32, True, bf16=True)  # rows 0-199 see no key


# --- Task 5: KV cache and decode ---------------------------------------------------------------------

def task5_case(w, name, B, H, L, D):
    """One decode step: the cache holds L positions (the last one appended by update_cache); the
    query attends to all of them."""
    g = w.generator(name)
    q = torch.randn(B, H, 1, D, generator=g)
    k, v = (torch.randn(B, H, L, D, generator=g) for _ in range(2))
    out = sdpa64(q.double(), k.double(), v.double(), False)
    w.save("task5", name, dict(q=q, k=k, v=v, out=out), 2e-5, 1e-4, B=B, H=H, L=L, D=D)


def make_task5(w):
    task5_case(w, "pos0_d128", 2, 4, 1, 128)       # the first token: only itself
    task5_case(w, "pos1_d64", 1, 3, 2, 64)
    task5_case(w, "len127_d128", 2, 4, 127, 128)
    task5_case(w, "len129_d96", 1, 2, 129, 96)
    task5_case(w, "len1000_d64", 2, 8, 1000, 64)
    task5_case(w, "len4097_d32", 1, 2, 4097, 32)


# --- Task 6: the inference loop's model ----------------------------------------------------------------

def task6_case(w, name, vocab, hidden, heads, layers, ffn, B, S, steps, model_seed):
    """A small model of task6/model.cpp's shape and seeded weights: greedy tokens and every step's
    logits, recomputed without a cache in float64 (tools/goldens/llm_reference.py)."""
    cfg = dict(vocab=vocab, hidden=hidden, heads=heads, layers=layers, ffn=ffn, model_seed=model_seed)
    prompt = torch.randint(0, vocab, (B, S), generator=w.generator(name))
    tokens, logits = llm_reference.task6_greedy(cfg, prompt, steps)
    w.save("task6", name, dict(prompt=prompt.float(), tokens=tokens.float(), logits=logits), 5e-4, 5e-4, B=B, S=S,
           steps=steps, **cfg)


def make_task6(w):
    task6_case(w, "prompt37_d64", 512, 256, 4, 2, 1024, 2, 37, 24, 6001)
    task6_case(w, "prompt1_d128", 300, 256, 2, 2, 1024, 3, 1, 12, 6002)    # a one-token prompt is a prefill too
    task6_case(w, "prompt129_d32", 1000, 128, 4, 3, 512, 1, 129, 8, 6003)


# --- Task 7: GPT-2 -------------------------------------------------------------------------------------

TOKENIZER_TEXTS = [
    "Hello world",
    "Hello world! It's a test: we'll see  if   \"don't\" & I'm  OK — naïve café, 東京 123456 3.14159\n\ttabs\tand\n"
    "newlines    trailing   \nÜnïcödé ß αβγ 🙂🙂 x²+y² ½ ١٢٣ don'T 'S 're'VE <|endoftext|> $$$ ...!!! \n",
    "   leading spaces, and trailing ones   ",
    "\n\n\n  \t \r\n mixed\u00a0no-break\u2003em space",
    "int main() { return x->y[3] != 0 ? 1 : -2; }  // code\n",
    "1234567890 12,345.67 +1-800 0x1F 1e-5 3rd 21st",
]


def make_task7(w):
    """The tokenizer's expected ids (tiktoken), and a small random-weight GPT-2 in Hugging Face's
    layout with torch's greedy tokens and logits for the two prompts (tools/goldens/llm_reference.py)."""
    import subprocess
    out = os.path.join(w.out_dir, "task7")
    enc = llm_reference.tiktoken_gpt2(os.path.join(ROOT, ".deps", "gpt2.tiktoken"))
    texts = TOKENIZER_TEXTS + list(llm_reference.PROMPTS)
    try:  # a long, real text: the first 100,000 characters of the King James Bible (bible-kjv)
        texts.append(subprocess.run(["bible", "-l0", "gen1:1-exo40:38"], capture_output=True, text=True,
                                    check=True).stdout[:100000])
    except (OSError, subprocess.CalledProcessError):
        print("goldens: bible-kjv missing, the tokenizer's long text is left out", flush=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        json.dump({"format_version": FORMAT_VERSION, "tiktoken": __import__("tiktoken").__version__,
                   "cases": [{"text": t, "ids": enc.encode_ordinary(t)} for t in texts]}, f, ensure_ascii=False)
    g = w.generator("tiny-gpt2")
    cfg = llm_reference.gpt2_config(50257, 128, 128, 2, 2)
    tensors = {}
    for name in llm_reference.gpt2_keys(cfg["n_layer"]):
        shape = llm_reference.gpt2_shape(name, cfg)
        t = torch.randn(*shape, generator=g)
        if name.endswith("weight") and len(shape) == 1:
            t = 1 + 0.1 * t        # LayerNorm gains
        elif name.endswith("bias"):
            t = 0.05 * t
        elif name == "wte.weight":
            t = 0.1 * t            # logits wide enough that greedy choices are not near-ties
        else:
            t = t / math.sqrt(shape[0])
        tensors[name] = t
    llm_reference.gpt2_save(os.path.join(out, "tiny"), cfg, tensors, write_safetensors)
    model_cfg, wts = llm_reference.gpt2_load(os.path.join(out, "tiny"))
    ref = {}
    for i, prompt in enumerate(llm_reference.PROMPTS):
        ids = torch.tensor([enc.encode_ordinary(prompt)])
        tokens, logits = llm_reference.gpt2_greedy(model_cfg, wts, ids, 50)
        ref.update({f"prompt{i}": ids.float(), f"tokens{i}": tokens.float(), f"logits{i}": logits})
    w.save("task7", "tiny_reference", ref, 1e-3, 1e-3, steps=50)
    make_broken_checkpoints(os.path.join(out, "checkpoints"), w.generator("small-gpt2"))


def make_broken_checkpoints(out, g):
    """Small checkpoints for the loader's tests: one valid without the "transformer." prefix, and
    one per problem the loader must name."""
    cfg = llm_reference.gpt2_config(64, 16, 64, 1, 1)
    good = {n: torch.randn(*llm_reference.gpt2_shape(n, cfg), generator=g) * 0.02 for n in llm_reference.gpt2_keys(1)}
    llm_reference.gpt2_save(os.path.join(out, "no_prefix"), cfg, good, write_safetensors, prefix="")
    missing = {k: v for k, v in good.items() if k != "h.0.mlp.c_fc.bias"}
    llm_reference.gpt2_save(os.path.join(out, "missing_tensor"), cfg, missing, write_safetensors)
    llm_reference.gpt2_save(os.path.join(out, "wrong_shape"), cfg,
                            dict(good, **{"h.0.attn.c_attn.weight": good["h.0.attn.c_attn.weight"].T.contiguous()}),
                            write_safetensors)
    llm_reference.gpt2_save(os.path.join(out, "wrong_activation"), dict(cfg, activation_function="relu"), good,
                            write_safetensors)


TASKS = {"task1": make_task1, "task2": make_task2, "task3": make_task3, "task4": make_task4, "task5": make_task5,
         "task6": make_task6, "task7": make_task7}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(ROOT, "goldens"))
    p.add_argument("--seed", type=int, default=20261121)
    p.add_argument("--only", choices=sorted(TASKS), action="append")
    args = p.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    w = Writer(args.out, args.seed)
    for task in args.only or sorted(TASKS):
        TASKS[task](w)
        print(f"goldens: {task} written", flush=True)
    print(f"goldens: {w.count} files in {args.out} (seed {args.seed}, torch {torch.__version__})")


if __name__ == "__main__":
    sys.exit(main())
