#!/usr/bin/env python3
"""Trains Task 7's default model: a small GPT-2 (Hugging Face layout, GPT-2's real 50,257-token
vocabulary) on the King James Bible from Debian's bible-kjv-text, with Debian's torch on the CPU.

    make model                      # → models/kjv-gpt2/{config.json, model.safetensors, reference.safetensors}
    tools/train_model.py --out DIR [--steps N] [--minutes M]
    tools/train_model.py --out DIR --reference-only   # the reference alone, for a checkpoint already there

Seeded (torch.manual_seed); the text is tokenised with tiktoken (.deps/py). Stops after --steps or
--minutes, whichever comes first, and writes the checkpoint, then reference.safetensors: the greedy
tokens and every step's logits of tools/llm_reference.py's float64 forward for the two prompts of
the exact-match check (Task 7's grader compares the engine against it).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llm_reference as ref  # noqa: E402
from make_goldens import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def corpus():
    """The whole King James Bible as plain text: book/chapter headings kept, verse numbers dropped."""
    try:
        raw = subprocess.run(["bible", "-l0", "gen1:1-rev22:21"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"train_model: cannot read the Bible text ({e}); install bible-kjv and bible-kjv-text (make deps)")
    return "\n".join(re.sub(r"^\s*\d+ ", "", line) for line in raw.splitlines()).strip() + "\n"


class GPT2(torch.nn.Module):
    """GPT-2 with parameters named and laid out as Hugging Face's (Conv1D weights [in, out])."""

    def __init__(self, vocab, n_positions, C, n_layer, n_head):
        super().__init__()
        self.cfg = ref.gpt2_config(vocab, n_positions, C, n_layer, n_head)
        P = torch.nn.Parameter
        self.p = torch.nn.ParameterDict()
        for name in ref.gpt2_keys(n_layer):
            shape = ref.gpt2_shape(name, self.cfg)
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                t = torch.ones(shape)
            elif name.endswith(".bias"):
                t = torch.zeros(shape)
            else:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                t = torch.randn(shape) * std
            self.p[name.replace(".", "__")] = P(t)

    def w(self, name):
        return self.p[name.replace(".", "__")]

    def forward(self, tokens):
        B, T = tokens.shape
        c = self.cfg
        C, H = c["n_embd"], c["n_head"]
        x = self.w("wte.weight")[tokens] + self.w("wpe.weight")[:T]
        for i in range(c["n_layer"]):
            h = f"h.{i}."
            a = torch.nn.functional.layer_norm(x, (C,), self.w(h + "ln_1.weight"), self.w(h + "ln_1.bias"), 1e-5)
            q, k, v = (a @ self.w(h + "attn.c_attn.weight") + self.w(h + "attn.c_attn.bias")).view(B, T, 3, H, C // H).permute(2, 0, 3, 1, 4)
            o = ref.causal_attention(q, k, v).permute(0, 2, 1, 3).reshape(B, T, C)
            x = x + o @ self.w(h + "attn.c_proj.weight") + self.w(h + "attn.c_proj.bias")
            a = torch.nn.functional.layer_norm(x, (C,), self.w(h + "ln_2.weight"), self.w(h + "ln_2.bias"), 1e-5)
            x = x + ref.gelu_tanh(a @ self.w(h + "mlp.c_fc.weight") + self.w(h + "mlp.c_fc.bias")) @ self.w(h + "mlp.c_proj.weight") \
                + self.w(h + "mlp.c_proj.bias")
        x = torch.nn.functional.layer_norm(x, (C,), self.w("ln_f.weight"), self.w("ln_f.bias"), 1e-5)
        return x @ self.w("wte.weight").T

    def save(self, out_dir):
        ref.gpt2_save(out_dir, self.cfg, {n: self.w(n).detach() for n in ref.gpt2_keys(self.cfg["n_layer"])}, write_safetensors)


def write_reference(model_dir, rank_file, steps=50):
    """Greedy tokens and logits of the float64 reference for the two prompts → reference.safetensors."""
    cfg, w = ref.gpt2_load(model_dir)
    enc = ref.tiktoken_gpt2(rank_file)
    tensors = {}
    for i, prompt in enumerate(ref.PROMPTS):
        ids = torch.tensor([enc.encode_ordinary(prompt)])
        tokens, logits = ref.gpt2_greedy(cfg, w, ids, steps)
        tensors.update({f"prompt{i}": ids.float(), f"tokens{i}": tokens.float(), f"logits{i}": logits})
    write_safetensors(os.path.join(model_dir, "reference.safetensors"), tensors,
                      {"steps": steps, "prompts": json.dumps(ref.PROMPTS), "atol": 2e-3, "rtol": 2e-3})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "kjv-gpt2"))
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1611)  # the year the King James Version appeared
    ap.add_argument("--reference-only", action="store_true",
                    help="only (re)write reference.safetensors for the checkpoint in --out")
    args = ap.parse_args()
    rank_file = os.path.join(ROOT, ".deps", "gpt2.tiktoken")
    if args.reference_only:
        write_reference(args.out, rank_file)
        print(f"train_model: wrote {args.out}/reference.safetensors", flush=True)
        return
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    enc = ref.tiktoken_gpt2(rank_file)
    ids = torch.tensor(enc.encode_ordinary(corpus()), dtype=torch.long)
    split = int(len(ids) * 0.98)
    train, val = ids[:split], ids[split:]
    print(f"train_model: {len(ids)} tokens ({len(train)} train, {len(val)} validation)", flush=True)
    model = GPT2(50257, 256, args.width, args.layers, args.width // 64)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.01)
    g = torch.Generator().manual_seed(args.seed)

    def batch(data):
        starts = torch.randint(0, len(data) - args.seq - 1, (args.batch,), generator=g)
        x = torch.stack([data[s:s + args.seq] for s in starts])
        y = torch.stack([data[s + 1:s + args.seq + 1] for s in starts])
        return x, y

    def val_loss():
        with torch.no_grad():
            return sum(torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
                       for x, y in (batch(val) for _ in range(8))) / 8

    t0, warmup, step = time.time(), 50, 0
    for step in range(1, args.steps + 1):
        lr = 3e-3 * min(1.0, step / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps))))
        for group in opt.param_groups:
            group["lr"] = lr
        x, y = batch(train)
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0:
            print(f"train_model: step {step}, loss {loss.item():.3f}, validation {val_loss():.3f}, "
                  f"{time.time() - t0:.0f} s", flush=True)
        if time.time() - t0 > args.minutes * 60:
            break
    print(f"train_model: stopped after {step} steps, {time.time() - t0:.0f} s; validation loss {val_loss():.3f}", flush=True)
    model.save(args.out)
    write_reference(args.out, rank_file)
    print(f"train_model: wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
