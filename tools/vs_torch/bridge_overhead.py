#!/usr/bin/env python3
"""The Python bridge's host cost per call, beside torch's SDPA, and what it means for Hugging Face generation.

    make python IMPL=reference  (here or where it is built); then on a GPU machine with a CUDA torch and transformers:
    ATTNLAB_IMPL=reference python3 tools/vs_torch/bridge_overhead.py [--calls 2000] [--tokens 64] [--runs 3]
    python3 tools/vs_torch/bridge_overhead.py --stub      # no GPU: the Python side alone, against a stub library

On a GPU (float32, TF32 off):
  1. Host time per call: each call timed alone on the host clock (time.perf_counter around it, no synchronisation:
     the time until the launch is queued), median over --calls calls after 50 warm-up calls, at shapes whose kernels
     take a few microseconds: attnlab.attention against F.scaled_dot_product_attention (is_causal=True) on the same
     q, k, v, and attnlab.decode against SDPA on the same one-query step over the whole cache (as Hugging Face's SDPA
     path calls it). Also the parts of attnlab's call: the argument checks alone (attnlab._checks), and torch's
     current stream read the way the call reads it (attnlab._streams.current). Every output is checked against
     SDPA's first (max abs difference printed).
  2. Hugging Face GPT-2 124M (random weights, seeded; batch 1, a 24-token prompt, --tokens greedy tokens): tokens/s
     with attn_implementation "eager", "sdpa" and "attnlab", median of --runs runs after a warm-up; the tokens of
     sdpa and attnlab must equal eager's (else exit 1).
--stub (CPU): a stub libattnlab.so (stub_source(), built with the system's cc) whose functions return at once, CPU tensors taken as device 0 (the device check and the stream read stubbed): the Python side of each call
(checks, output allocation, the ctypes call) without CUDA. Exit 77 without a GPU, unless --stub.
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnlab  # noqa: E402
from attnlab import _checks, _library, _streams, ops  # noqa: E402

# The shapes: GPT-2's attention (12 heads of 64) at batch 1, a 128-token prompt, one new token over a 256-entry cache.
PREFILL = (1, 12, 128, 64)
CACHE = (1, 12, 256, 64)



def stub_source():
    """C source of a libattnlab.so whose functions return at once: the package's interface version, every kernel entry
    point with the parameters the package declares for it (attnlab._library._SIGNATURES)."""
    ctype = {ctypes.c_void_p: "const void*", ctypes.c_int: "int"}
    lines = ["#include <stdint.h>",
             f"int attnlab_abi_version(void) {{ return {_library.ABI_VERSION}; }}",
             'const char* attnlab_impl(void) { return "stub"; }',
             "int attnlab_last_error(char* e, int n) { if (n > 0) e[0] = 0; return 0; }",
             "int attnlab_device_count(void) { return 1; }",
             "int attnlab_synchronize(int d) { (void)d; return 0; }"]
    for name, argtypes in _library._SIGNATURES.items():
        params = ", ".join(["int device", "uintptr_t stream"] + [f"{ctype[t]} a{i}" for i, t in enumerate(argtypes)])
        lines.append(f"int attnlab_{name}({params}) {{ return 0; }}")
    return "\n".join(lines) + "\n"


def per_call_us(fn, calls, warmup=50):
    """Median host time of one call of fn() (µs), each timed alone."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def host_costs(calls, device):
    """[(what, µs per call)] of attnlab and SDPA on `device` ("cuda", or "cpu" with --stub)."""
    g = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(*PREFILL, device=device, generator=g) for _ in range(3))
    q1 = torch.randn(CACHE[0], CACHE[1], 1, CACHE[3], device=device, generator=g)
    kc, vc = (torch.randn(*CACHE, device=device, generator=g) for _ in range(2))
    L = CACHE[2]
    rows = [("attnlab.attention", per_call_us(lambda: attnlab.attention(q, k, v, causal=True), calls)),
            ("  its argument checks alone", per_call_us(lambda: _checks.attention(q, k, v, True), calls)),
            ("attnlab.decode", per_call_us(lambda: attnlab.decode(q1, kc, vc, L), calls)),
            ("  its argument checks alone", per_call_us(lambda: _checks.decode(q1, kc, vc, L), calls)),
            ("torch's current stream, as the calls read it", per_call_us(lambda: _streams.current(0), calls))]
    if device == "cuda":
        rows += [("SDPA, the prompt's attention (is_causal=True)",
                  per_call_us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), calls)),
                 ("SDPA, one decode step over the cache", per_call_us(lambda: F.scaled_dot_product_attention(q1, kc, vc), calls))]
        with torch.no_grad():
            diffs = [(attnlab.attention(q, k, v, causal=True) - F.scaled_dot_product_attention(q, k, v, is_causal=True)).abs().max(),
                     (attnlab.decode(q1, kc, vc, L) - F.scaled_dot_product_attention(q1, kc, vc)).abs().max()]
        print(f"outputs against SDPA's: attention max |diff| {diffs[0].item():.2e}, decode {diffs[1].item():.2e}")
    return rows


def stub_library(tmp):
    src, lib = os.path.join(tmp, "stub.c"), os.path.join(tmp, "libattnlab_stub.so")
    with open(src, "w") as f:
        f.write(stub_source())
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-w", src, "-o", lib], check=True)
    return lib


def use_stub(lib):
    """The stub library, CPU tensors taken as CUDA device 0, the stream read as the default stream's 0."""
    os.environ["ATTNLAB_LIB"] = lib
    torch.Tensor.is_cuda = property(lambda self: True)
    torch.Tensor.get_device = lambda self: 0
    _streams.current = ops.current_stream = lambda device: 0


def hf_tokens_per_s(tokens, runs):
    """[(implementation, median tokens/s, tokens)] of GPT-2 124M (random weights) generating at batch 1."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hf_attnlab  # the same model and generation as tools/vs_torch/hf_attnlab.py
    attnlab.hf.register()
    out = []
    for impl in hf_attnlab.IMPLS:
        model = hf_attnlab.gpt2(impl, None).cuda().eval()
        ids = torch.randint(0, model.config.vocab_size, (1, 24), generator=torch.Generator().manual_seed(2024)).cuda()
        hf_attnlab.generate(model, ids, 4)  # warm-up
        rates = []
        for _ in range(runs):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            toks = hf_attnlab.generate(model, ids, tokens)
            torch.cuda.synchronize()
            rates.append(tokens / (time.perf_counter() - t0))
        out.append((impl, statistics.median(rates), toks))
        del model
        torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stub", action="store_true", help="no GPU: the Python side against a stub library")
    args = ap.parse_args()
    if args.stub:
        with tempfile.TemporaryDirectory() as tmp:
            use_stub(stub_library(tmp))
            print(f"bridge_overhead --stub: the Python side of a call (a stub library, CPU tensors), torch {torch.__version__}, "
                  f"python {sys.version.split()[0]}; median of {args.calls} calls")
            for what, us in host_costs(args.calls, "cpu"):
                print(f"  {what:<48} {us:8.2f} µs")
        return 0
    if not torch.cuda.is_available():
        print("skipped: no CUDA device (torch sees none)")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"bridge_overhead: {torch.cuda.get_device_name()}, torch {torch.__version__}, python {sys.version.split()[0]}; "
          f"bridge {attnlab.library_path()[0]} ({attnlab.impl()}); float32")
    print(f"host time per call (median of {args.calls}; prompt {PREFILL}, cache {CACHE}):")
    for what, us in host_costs(args.calls, "cuda"):
        print(f"  {what:<48} {us:8.2f} µs")
    from attnlab import hf  # noqa: F401  (registers nothing yet; `import attnlab.hf` here would make attnlab local to main)
    import transformers
    print(f"Hugging Face {transformers.__version__}, GPT-2 124M (random weights), batch 1, {args.tokens} greedy tokens, "
          f"median of {args.runs} runs:")
    results = hf_tokens_per_s(args.tokens, args.runs)
    eager = results[0][2]
    ok = True
    for impl, rate, toks in results:
        same = toks == eager
        ok &= same
        print(f"  {impl:<8} {rate:8.1f} tokens/s{'' if impl == 'eager' else ('  (= eager)' if same else '  (DIFFERS from eager)')}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
