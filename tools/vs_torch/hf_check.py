#!/usr/bin/env python3
"""Task 7's exact match against Hugging Face: GPT2LMHeadModel (transformers, eager attention, its KV
cache) loads the same checkpoint as the engine, and the greedy ids of both prompts are compared
with the engine's (`gpt2 --ids`) and with the float64 torch reference that `make model` wrote.

    python3 tools/vs_torch/hf_check.py --gpt2 build/reference/bin/gpt2 [--model models/kjv-gpt2] [--tokens 50]

Needs torch and transformers (the GPU machine has them; nothing is downloaded). Exit 1 on a mismatch.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "goldens"))
import llm_reference as ref  # noqa: E402


def hf_greedy(model, ids, tokens, device):
    x = torch.tensor([ids], device=device)
    with torch.no_grad():
        out = model.generate(x, max_new_tokens=tokens, do_sample=False, use_cache=True, pad_token_id=50256,
                             attention_mask=torch.ones_like(x))
    return out[0, len(ids):].tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpt2", required=True, help="the engine's CLI (build/…/bin/gpt2)")
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "kjv-gpt2"))
    ap.add_argument("--tokens", type=int, default=50)
    args = ap.parse_args()
    import transformers
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = transformers.GPT2LMHeadModel.from_pretrained(args.model, attn_implementation="eager").to(device).eval()
    reference = ref.read_safetensors(os.path.join(args.model, "reference.safetensors"))
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {device}; model {args.model}")
    ok = True
    for i, prompt in enumerate(ref.PROMPTS):
        run = subprocess.run([args.gpt2, "--model", args.model, "--prompt", prompt, "--tokens", str(args.tokens), "--ids"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"prompt {i + 1}: the engine failed: {run.stderr.strip()}")
            ok = False
            continue
        ours = json.loads(run.stdout.strip().splitlines()[-1])
        hf = hf_greedy(model, ours["prompt"], args.tokens, device)
        torch64 = [int(t) for t in reference[f"tokens{i}"][0, :args.tokens].tolist()]
        same_hf = ours["ids"] == hf
        same_ref = ours["ids"] == torch64
        first = next((k for k in range(args.tokens) if ours["ids"][k] != hf[k]), None)
        print(f"prompt {i + 1} ({len(ours['prompt'])} tokens): engine == HF GPT2LMHeadModel: {same_hf}"
              f"{'' if same_hf else f' (first difference at token {first})'}; engine == torch float64 reference: {same_ref}")
        print(f"  engine: {ours['ids'][:12]} …\n  HF:     {hf[:12]} …")
        ok = ok and same_hf and same_ref
    print("hf_check: all equal" if ok else "hf_check: MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
