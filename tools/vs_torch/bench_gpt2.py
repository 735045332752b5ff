#!/usr/bin/env python3
"""Task 7's speed: the engine against Hugging Face's GPT2LMHeadModel (eager, fp32, its KV cache) on
the same GPU in the same command, with a random-weight model of GPT-2 124M's exact shape made here.

    python3 tools/vs_torch/bench_gpt2.py --gpt2 build/reference/bin/gpt2 [--decode-prompt 128 --tokens 200]

Measures: prefill of 1024 tokens (ms) and decode tokens/s at batch 1 after a short prompt, each the
median of 3 runs after a warm-up; CUDA synchronised around every timed region (HF) or CUDA events
(engine). Needs torch and transformers with a GPU (nothing is downloaded).
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch


def hf_times(model, prefill, prompt, tokens):
    dev = "cuda"
    ids = torch.arange(prefill, device=dev)[None] % 50257
    short = torch.arange(prompt, device=dev)[None] % 50257

    def prefill_ms():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(ids, use_cache=True)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    def decode_tps():
        out = model(short, use_cache=True)
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        past = out.past_key_values
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(tokens):
            out = model(nxt, past_key_values=past, use_cache=True)
            past, nxt = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        return tokens / (time.perf_counter() - t0)

    with torch.no_grad():
        prefill_ms(), decode_tps()  # warm-up
        return statistics.median(prefill_ms() for _ in range(3)), statistics.median(decode_tps() for _ in range(3))


def engine(gpt2, model_dir, prompt, tokens):
    runs = []
    for _ in range(3):
        p = subprocess.run([gpt2, "--model", model_dir, "--bench", str(prompt), "--tokens", str(tokens)], capture_output=True,
                           text=True, check=True)
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpt2", required=True)
    ap.add_argument("--prefill", type=int, default=1024)
    ap.add_argument("--decode-prompt", type=int, default=128)
    ap.add_argument("--tokens", type=int, default=200)
    args = ap.parse_args()
    import transformers
    torch.manual_seed(0)
    cfg = transformers.GPT2Config()  # GPT-2 124M: 12 layers × 768, 12 heads, 1024 positions
    model = transformers.GPT2LMHeadModel(cfg).eval()
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d, safe_serialization=True)
        model = transformers.GPT2LMHeadModel.from_pretrained(d, attn_implementation="eager").cuda().eval()
        hf_prefill, hf_tps = hf_times(model, args.prefill, args.decode_prompt, args.tokens)
        ours_prefill = statistics.median(r["prefill_ms"] for r in engine(args.gpt2, d, args.prefill, 0))
        ours_tps = statistics.median(r["decode_tokens_per_s"] for r in engine(args.gpt2, d, args.decode_prompt, args.tokens))
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, transformers {transformers.__version__}")
    print(f"random-weight GPT-2 124M (12 × 768), fp32, batch 1")
    print(f"prefill {args.prefill} tokens:   engine {ours_prefill:8.2f} ms   HF eager {hf_prefill:8.2f} ms   "
          f"engine {hf_prefill / ours_prefill:.2f}× faster")
    print(f"decode after {args.decode_prompt} tokens: engine {ours_tps:8.1f} tok/s   HF eager {hf_tps:8.1f} tok/s   "
          f"engine {ours_tps / hf_tps:.2f}× faster  [goal ≥ 3×]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
