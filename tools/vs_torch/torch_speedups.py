#!/usr/bin/env python3
"""The course's speedups against PyTorch: the student's kernels (through the Python bridge) beside
torch.nn.MultiheadAttention and F.scaled_dot_product_attention's backends, at Task 4's four course
shapes and Task 5's decode shapes (grader/timed.cpp's shapes_of), same GPU, same run, float32.

    make python IMPL=…  (here or where it is built); then on a GPU machine with a CUDA torch:
    ATTNLAB_IMPL=reference python3 tools/vs_torch/torch_speedups.py [--results Results.md] [--markdown out.md] [--quick]

Run it after `make grade`: it writes a subsection "### Against PyTorch (same GPU, same run)" into
Results.md's "## Task 4" and "## Task 5" sections (replacing one written before); --markdown writes
the same tables to a file of their own (the default when Results.md has no such sections).

What is timed (CUDA events around each call, 2–3 warm-up calls, a 256 MiB buffer read before every
timed call to flush L2 and leave it clean (event_timing.flush_l2), median of the repetitions; TF32 off):
  - attnlab: the student's kernel, q, k, v [B, H, S, D] already in head layout;
  - SDPA math / efficient: F.scaled_dot_product_attention on the same tensors under one backend —
    the fair comparison (the attention core only). flash and cuDNN refuse float32 (they take fp16/bf16):
    that is reported, not timed;
  - nn.MultiheadAttention (embed = H·D, batch_first, need_weights=False, eval, no grad): the module
    as a model calls it, so its input and output projections are INCLUDED (four [·, H·D]² GEMMs) —
    slower than the core by construction; shown because it is what "attention in PyTorch" means to
    most users. At decode shapes it projects the whole cache each call.
A configuration that cannot fit in the GPU's memory (math at B=64, S=4096 needs 137 GB of scores)
is skipped with a note. Before timing, the bridge's output is checked against float64 torch on the
first batch element (a failure is reported and its speedups are not written).
"""
import argparse
import math
import os
import re
import statistics
import sys

import torch
import torch.nn.functional as F

from event_timing import flush_l2  # the L2 emptied and left clean, as every benchmark does

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnlab  # noqa: E402

HEADING = "### Against PyTorch (same GPU, same run)"
TASK4_SHAPES = [(4, 32, 128, 128, False), (4, 32, 128, 128, True), (64, 32, 4096, 128, False), (64, 32, 4096, 128, True)]
TASK5_SHAPES = [(1, 32, 1024, 128), (1, 32, 8192, 128), (1, 32, 32768, 128), (8, 32, 8192, 128), (32, 32, 4096, 128)]


class Timer:
    def __init__(self):
        self.flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")

    def __call__(self, fn, reps, warm):
        for _ in range(warm):
            fn()
        times = []
        for _ in range(reps):
            flush_l2(self.flush)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)


def sdpa_backends():
    """(name, context factory) of SDPA's backends, on this torch."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return []
    names = [("math", "MATH"), ("efficient", "EFFICIENT_ATTENTION"), ("flash", "FLASH_ATTENTION"), ("cuDNN", "CUDNN_ATTENTION")]
    return [(n, (lambda be: (lambda: sdpa_kernel(be)))(getattr(SDPBackend, a))) for n, a in names if hasattr(SDPBackend, a)]


def fits(nbytes, margin=0.8):
    free, _ = torch.cuda.mem_get_info()
    return nbytes <= free * margin


def oracle64(q, k, v, causal):
    Sq, Sk = q.shape[2], k.shape[2]
    s = q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[3])
    if causal:
        vis = torch.arange(Sk, device=q.device)[None, :] <= torch.arange(Sq, device=q.device)[:, None] + (Sk - Sq)
        s = s.masked_fill(~vis, float("-inf"))
    return torch.softmax(s, -1) @ v.double()


def check(got, want, what):
    err = (got.double() - want).abs()
    bad = int((err > 2e-4 + 2e-4 * want.abs()).sum())
    return None if bad == 0 else f"{what}: {bad} elements off the float64 oracle (max abs error {err.max().item():.3g})"


def try_time(timer, fn, reps, warm, need_bytes=0):
    """ms, or a note saying why it was not timed."""
    if need_bytes and not fits(need_bytes):
        return f"skipped: needs about {need_bytes / 1e9:.0f} GB"
    try:
        return timer(fn, reps, warm)
    except torch.cuda.OutOfMemoryError:
        return "skipped: out of memory"
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return "refused: " + first[:110]
    finally:
        torch.cuda.empty_cache()


def words(note):
    """A note as one Markdown table cell: one line, no column bars."""
    return " ".join(str(note).split()).replace("|", "/")[:160]


def cell(ms, mine):
    if isinstance(ms, str):
        return words(ms)
    return f"{ms:.3f} ms ({ms / mine:.2f}×)" if isinstance(mine, float) else f"{ms:.3f} ms"


def mha_for(E, H):
    m = torch.nn.MultiheadAttention(E, H, batch_first=True, bias=True, device="cuda").eval()
    return m


def task4_rows(timer, quick):
    rows, notes = [], []
    for B, H, S, D, causal in TASK4_SHAPES[:2] if quick else TASK4_SHAPES:
        large = S > 1024
        reps, warm = (5, 1) if large else (20, 3)
        q, k, v = (torch.randn(B, H, S, D, device="cuda") for _ in range(3))
        name = f"B={B} H={H} S={S} D={D}{' causal' if causal else ''}"
        try:
            bad = check(attnlab.attention(q[:1], k[:1], v[:1], causal=causal), oracle64(q[:1], k[:1], v[:1], causal), name)
        except RuntimeError as e:  # a TODO not written yet, a CUDA error: reported in the table
            bad = f"failed: {e}"
        mine = bad or timer(lambda: attnlab.attention(q, k, v, causal=causal), reps, warm)
        row = {"shape": name, "attnlab": mine}
        for bname, ctx in sdpa_backends():
            def run():
                with ctx():
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            need = B * H * S * S * 4 * 3 if bname == "math" else 0  # scores, their softmax, a temporary
            row[bname] = try_time(timer, run, reps, warm, need)
        E = H * D
        x = torch.randn(B, S, E, device="cuda")
        mha = mha_for(E, H)
        mask = torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1) if causal else None

        def run_mha():
            with torch.no_grad():
                mha(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)
        row["MHA"] = try_time(timer, run_mha, reps, warm)
        del q, k, v, x, mha
        torch.cuda.empty_cache()
        rows.append(row)
        print(row, flush=True)
    return rows, notes


def task5_rows(timer, quick):
    rows = []
    for B, H, L, D in TASK5_SHAPES[:2] if quick else TASK5_SHAPES:
        q = torch.randn(B, H, 1, D, device="cuda")
        kc, vc = torch.randn(B, H, L, D, device="cuda"), torch.randn(B, H, L, D, device="cuda")
        name = f"decode B={B} H={H} L={L} D={D}"
        try:
            bad = check(attnlab.decode(q[:1], kc[:1], vc[:1], L), oracle64(q[:1], kc[:1], vc[:1], False), name)
        except RuntimeError as e:
            bad = f"failed: {e}"
        mine = bad or timer(lambda: attnlab.decode(q, kc, vc, L), 20, 3)
        row = {"shape": name, "attnlab": mine}
        for bname, ctx in sdpa_backends():
            def run():
                with ctx():
                    F.scaled_dot_product_attention(q, kc, vc)
            row[bname] = try_time(timer, run, 20, 3, B * H * L * 4 * 3 if bname == "math" else 0)
        E = H * D
        xq, xkv = torch.randn(B, 1, E, device="cuda"), torch.randn(B, L, E, device="cuda")
        mha = mha_for(E, H)

        def run_mha():
            with torch.no_grad():
                mha(xq, xkv, xkv, need_weights=False)
        row["MHA"] = try_time(timer, run_mha, 20, 3)
        del q, kc, vc, xq, xkv, mha
        torch.cuda.empty_cache()
        rows.append(row)
        print(row, flush=True)
    return rows


def table(rows, intro):
    cols = ["attnlab"] + [n for n, _ in sdpa_backends()] + ["MHA"]
    head = {"attnlab": "attnlab (the bridge)", "math": "SDPA math", "efficient": "SDPA efficient", "flash": "SDPA flash",
            "cuDNN": "SDPA cuDNN", "MHA": "nn.MultiheadAttention (+ projections)"}
    out = [HEADING, "", intro, "",
           "| shape | " + " | ".join(head[c] for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for r in rows:
        mine = r["attnlab"]
        cells = [f"{mine:.3f} ms" if isinstance(mine, float) else f"**{words(mine)}**"] + [cell(r[c], mine) for c in cols[1:]]
        out.append(f"| {r['shape']} | " + " | ".join(cells) + " |")
    out += ["", "(×: that implementation's time over the bridge's: above 1, the bridge's kernel is faster.)", ""]
    return "\n".join(out)


def put_section(text, task, block):
    """Replaces (or adds) the subsection HEADING inside the "## Task N" section of text."""
    m = re.search(rf"^## Task {task}\b.*$", text, re.M)
    if not m:
        return None
    nxt = re.search(r"^## ", text[m.end():], re.M)
    end = m.end() + nxt.start() if nxt else len(text)
    section = text[m.end():end]
    old = section.find(HEADING)
    if old >= 0:
        after = re.search(r"^##+ ", section[old + len(HEADING):], re.M)
        stop = old + len(HEADING) + after.start() if after else len(section)
        section = section[:old] + section[stop:]
    section = section.rstrip("\n") + "\n\n" + block + "\n"
    return text[:m.end()] + section + text[end:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="Results.md", help="a Results.md with ## Task 4 / ## Task 5 sections (make grade's)")
    ap.add_argument("--markdown", help="also (or, without a Results.md, only) write the tables to this file")
    ap.add_argument("--quick", action="store_true", help="the two smallest shapes of each task (a smoke run)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device (torch sees none)")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    gpu = torch.cuda.get_device_name()
    print(f"torch_speedups: {gpu}, torch {torch.__version__}, bridge {attnlab.library_path()[0]} ({attnlab.impl()})", flush=True)
    timer = Timer()
    with torch.no_grad():
        rows4, _ = task4_rows(timer, args.quick)
        rows5 = task5_rows(timer, args.quick)
    intro = (f"{gpu}, torch {torch.__version__}, float32 (TF32 off), this run; `tools/vs_torch/torch_speedups.py` through the Python "
             f"bridge ({attnlab.impl()}). Median of CUDA-event times with L2 flushed. SDPA: the attention core on the same "
             f"[B, H, S, D] tensors; flash and cuDNN take only fp16/bf16 and refuse float32. nn.MultiheadAttention includes "
             f"its input and output projections.")
    block4 = table(rows4, intro)
    block5 = table(rows5, intro + " Decode: one query per sequence against L cached positions; MHA projects all L each call.")
    wrote = []
    if os.path.isfile(args.results):
        text = open(args.results).read()
        new = put_section(text, 4, block4)
        new = put_section(new, 5, block5) if new else None
        if new:
            open(args.results, "w").write(new)
            wrote.append(args.results)
        else:
            print(f"torch_speedups: {args.results} has no '## Task 4' / '## Task 5' sections; not changed")
    if args.markdown or not wrote:
        path = args.markdown or "torch_speedups.md"
        open(path, "w").write(f"## Task 4\n\n{block4}\n## Task 5\n\n{block5}")
        wrote.append(path)
    print("torch_speedups: wrote " + ", ".join(wrote))
    failed = [r["shape"] for r in rows4 + rows5 if isinstance(r["attnlab"], str)]
    if failed:
        print("torch_speedups: the bridge's output was wrong at " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
