#!/usr/bin/env python3
"""Hugging Face models on the student's attention: greedy generation with attn_implementation
"eager", "sdpa" and "attnlab" (python/attnlab/hf.py: Task 4's kernel on the prompt, Task 5's per new
token), float32, on a GPU. The tokens of "sdpa" and "attnlab" must equal eager's; tokens/s of each.

    make python IMPL=…  (here or where it is built); then on a GPU machine with torch and transformers:
    ATTNLAB_IMPL=reference python3 tools/vs_torch/hf_attnlab.py [--tokens 32] [--model models/kjv-gpt2]

Models: GPT-2 124M (GPT2LMHeadModel from GPT2Config(), random weights, seeded), a small Llama
(LlamaForCausalLM from a config: 4 layers, 8 query heads on 2 K/V heads — GQA — head_dim 32, random
weights, seeded), and Task 7's default model (the Makefile's MODEL_DIR, models/kjv-gpt2) when it is
there. Prompt: 24 seeded random token ids, batch 1. Exit 1 when any implementation's tokens differ
from eager's (the first difference and eager's top-2 logit gap there are printed: a gap near 0 is a
float32 tie, not a bug); 77 without a GPU.
"""
import argparse
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnlab  # noqa: E402
import attnlab.hf  # noqa: E402

IMPLS = ("eager", "sdpa", "attnlab")


def gpt2(impl, _):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(124)
    return GPT2LMHeadModel._from_config(GPT2Config(), attn_implementation=impl)


def llama(impl, _):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=32000, hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=2, head_dim=32, max_position_embeddings=1024)
    torch.manual_seed(7)
    return LlamaForCausalLM._from_config(cfg, attn_implementation=impl)


def pretrained(impl, path):
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(path, attn_implementation=impl, torch_dtype=torch.float32)


def generate(model, ids, tokens):
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=tokens, min_new_tokens=tokens,
                             do_sample=False, use_cache=True, pad_token_id=0)
    return out[0, ids.shape[1]:].tolist()


def tie_gap(model, ids, prefix):
    """eager's top-2 logit gap at the step after `prefix`."""
    x = torch.cat([ids, torch.tensor([prefix], device=ids.device, dtype=ids.dtype)], 1) if prefix else ids
    with torch.no_grad():
        top = model(x).logits[0, -1].topk(2).values
    return (top[0] - top[1]).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "kjv-gpt2"), help="Task 7's default model (if there)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device (torch sees none)")
        return 77
    import transformers
    attnlab.hf.register()
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"hf_attnlab: transformers {transformers.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}; "
          f"bridge {attnlab.library_path()[0]} ({attnlab.impl()}); {args.tokens} greedy tokens, float32", flush=True)
    models = [("GPT-2 124M (random weights)", gpt2, None), ("Llama, GQA 8/2 heads (random weights)", llama, None)]
    if os.path.isfile(os.path.join(args.model, "model.safetensors")):
        models.append((f"Task 7's default model ({os.path.relpath(args.model, ROOT)})", pretrained, args.model))
    else:
        print(f"hf_attnlab: no model at {args.model} (make model): its row is left out")
    ok = True
    for title, build, path in models:
        g = torch.Generator().manual_seed(2024)
        results = {}
        for impl in IMPLS:
            model = build(impl, path).cuda().eval()
            ids = torch.randint(0, model.config.vocab_size, (1, 24), generator=g.manual_seed(2024)).cuda()
            generate(model, ids, 4)  # warm-up
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            toks = generate(model, ids, args.tokens)
            torch.cuda.synchronize()
            results[impl] = (toks, args.tokens / (time.perf_counter() - t0))
            if impl == "eager":
                eager_model, eager_ids = model, ids
            else:
                del model
        line = [f"{title}:"]
        for impl in IMPLS:
            toks, tps = results[impl]
            same = toks == results["eager"][0]
            line.append(f"{impl} {tps:.1f} tok/s" + ("" if impl == "eager" else f" ({'= eager' if same else 'DIFFERS'})"))
            if not same:
                k = next(i for i, (a, b) in enumerate(zip(toks, results["eager"][0])) if a != b)
                gap = tie_gap(eager_model, eager_ids, results["eager"][0][:k])
                line.append(f"[{impl}: first difference at token {k}, eager's top-2 gap there {gap:.2e}]")
                ok = False
        print("  ".join(line), flush=True)
        print(f"  eager's tokens: {results['eager'][0][:16]} …", flush=True)
        del eager_model
        torch.cuda.empty_cache()
    print("hf_attnlab: all equal to eager" if ok else "hf_attnlab: MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
