"""Independent torch references for the models of Tasks 6 and 7, used by tools/goldens/make_goldens.py.

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


def greedy(logits_of, prompt, steps):
    """Greedy generation without a cache, recomputing the whole sequence each step with
    logits_of(tokens [B, T]) → [B, V]: tokens [B, steps + 1] and logits [steps + 1, B, V]."""
    seq, tokens, logits = prompt.clone(), [], []
    for _ in range(steps + 1):
        lg = logits_of(seq)
        nxt = lg.argmax(-1)
        logits.append(lg)
        tokens.append(nxt)
        seq = torch.cat([seq, nxt[:, None]], dim=1)
    return torch.stack(tokens, dim=1), torch.stack(logits)


def task6_greedy(cfg, prompt, steps):
    wts = task6_weights(cfg)
    return greedy(lambda seq: task6_logits(wts, cfg, seq), prompt, steps)


# --- Task 7: GPT-2 in Hugging Face's layout ------------------------------------------------------------
# Keys as GPT2LMHeadModel saves them ("transformer." prefix; the LM head is tied to wte). Conv1D
# weights are [in, out]: y = x·W + b.

def gpt2_keys(n_layer):
    keys = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"]
    for i in range(n_layer):
        for k in ("ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                  "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                  "mlp.c_proj.weight", "mlp.c_proj.bias"):
            keys.append(f"h.{i}.{k}")
    return keys


def gpt2_shape(name, cfg):
    """The shape of a tensor of gpt2_keys in a checkpoint of this config."""
    V, P, C = cfg["vocab_size"], cfg["n_positions"], cfg["n_embd"]
    short = name.split(".", 2)[-1] if name.startswith("h.") else name
    return {"wte.weight": [V, C], "wpe.weight": [P, C], "attn.c_attn.weight": [C, 3 * C], "attn.c_attn.bias": [3 * C],
            "attn.c_proj.weight": [C, C], "mlp.c_fc.weight": [C, 4 * C], "mlp.c_fc.bias": [4 * C],
            "mlp.c_proj.weight": [4 * C, C]}.get(short, [C])


def gpt2_save(out_dir, cfg, tensors, write_safetensors, prefix="transformer."):
    """config.json + model.safetensors as GPT2LMHeadModel.save_pretrained lays them out (prefix "":
    as GPT2Model and the hub's gpt2 checkpoint do)."""
    import json, os
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), {prefix + k: v for k, v in tensors.items()}, {"format": "pt"})


def gpt2_config(vocab, n_positions, n_embd, n_layer, n_head):
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": vocab, "n_positions": n_positions,
            "n_ctx": n_positions, "n_embd": n_embd, "n_layer": n_layer, "n_head": n_head, "n_inner": None,
            "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
            "attn_pdrop": 0.0, "initializer_range": 0.02, "bos_token_id": 50256, "eos_token_id": 50256,
            "tie_word_embeddings": True, "torch_dtype": "float32"}


def read_safetensors(path):
    """name → float64 tensor, for F32 files (a plain reader: 8-byte length, JSON header, data)."""
    import json, struct
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", f"{path}: {name} is {e['dtype']}, not F32"
        b, end = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:end], dtype=np.float32).copy()).reshape(e["shape"]).double()
    return out


def gpt2_load(model_dir):
    import json, os
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    raw = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    w = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in raw.items()}
    return cfg, w


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gpt2_logits(cfg, w, tokens):
    """The last position's logits [B, V] for tokens [B, T], in float64, recomputing everything."""
    B, T = tokens.shape
    C, heads, eps = cfg["n_embd"], cfg["n_head"], cfg.get("layer_norm_epsilon", 1e-5)
    D = C // heads
    x = w["wte.weight"][tokens] + w["wpe.weight"][:T]
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = (h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]).view(B, T, 3, heads, D).permute(2, 0, 3, 1, 4)
        o = causal_attention(qkv[0], qkv[1], qkv[2]).permute(0, 2, 1, 3).reshape(B, T, C)
        x = x + o @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = gelu_tanh(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return layer_norm(x[:, -1], w["ln_f.weight"], w["ln_f.bias"], eps) @ w["wte.weight"].T


def gpt2_greedy(cfg, w, prompt, steps):
    return greedy(lambda seq: gpt2_logits(cfg, w, seq), prompt, steps)


GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# The course's prompt (Task 7) and a second one, for the exact-match checks.
PROMPTS = ["What are the advantages of using flashattention kernels in large language model inference?",
           "And God said unto Moses,"]


def tiktoken_gpt2(rank_file):
    """tiktoken's GPT-2 encoding from the local rank file (tiktoken is in .deps/py, see fetch_assets.sh)."""
    import tiktoken
    import tiktoken.load
    ranks = tiktoken.load.load_tiktoken_bpe(rank_file)
    return tiktoken.Encoding(name="gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256})
