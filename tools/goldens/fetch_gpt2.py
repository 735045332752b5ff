#!/usr/bin/env python3
"""Downloads the real GPT-2 (124M) checkpoint for Task 7, on a machine with internet access.

    pip install huggingface_hub && python3 tools/goldens/fetch_gpt2.py [--repo openai-community/gpt2] [--out models/gpt2]
    GPT2_DIR=models/gpt2 make task7 PROMPT="Hello, my name is"

Only config.json and model.safetensors are fetched (the engine reads nothing else). The project's
own machines have no internet: there `make model` trains the default model instead.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default="openai-community/gpt2")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "gpt2"))
    args = ap.parse_args()
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        sys.exit("fetch_gpt2: needs huggingface_hub (pip install huggingface_hub)")
    path = snapshot_download(args.repo, allow_patterns=["config.json", "model.safetensors"], local_dir=args.out)
    print(f"fetch_gpt2: {args.repo} in {path}; run it with GPT2_DIR={path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
