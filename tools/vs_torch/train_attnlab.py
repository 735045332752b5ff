#!/usr/bin/env python3
"""Train on your own kernels: Task 7's course model trained with torch's attention and with yours (Task 4c in
float32, 4d in bf16).

    make train-attnlab [IMPL=reference] [TRAIN_ARGS="--steps 1500"]    # GPU → build/train-attnlab/
    make train-attnlab TRAIN_ARGS="--precision bf16"                   # bf16 autocast, sequences of 4,096
    PYTHONPATH=python tools/vs_torch/train_attnlab.py [--precision float32|bf16] [--steps N] [--tokens build/kjv-tokens.pt]
                                                     [--out DIR] [--max-minutes M]
    tools/vs_torch/train_attnlab.py --plot DIR/train_attnlab.json     # the picture from the curves (needs matplotlib only)
    tools/vs_torch/train_attnlab.py --test                             # the CPU, a few steps, a small model: the script end to end

The model and the data are tools/goldens/train_model.py's GPU ones: its GPT-2 (6 layers × 384 wide, 6 heads of 64,
GPT-2's 50,257-token vocabulary), sequences of 256, batches of 32, dropout 0.2 (embeddings and residual
branches), AdamW (1e-3, betas 0.9/0.95, weight decay 0.1, gradients clipped at 1), the King James text with
every 50th block of 4,096 tokens held out for validation. Three runs, each from the same seed (the same
initial weights and dropout masks) and the same data order (the same batches), in float32 throughout with
TF32 off, so that only the attention differs:

    attnlab    attnlab.attention in every layer: your Task 4c forward (with log-sum-exp) and backward
    sdpa       torch's scaled_dot_product_attention, memory-efficient backend (float32): the baseline
    sdpa-math  the same function on SDPA's math backend: the same attention with another reduction order

The run-to-run noise is the distance between the two torch runs: two correct float32 attentions that differ
only in rounding, whose differences training amplifies as it would amplify yours. (A different data order
would measure the spread of the batches instead, far larger than any rounding: a bug would hide in it.)
The learning rate follows the steps (warm-up 50, cosine down to 10 %), never the clock. Logged: every step's
training loss (the same batch in every run), and every --eval-every steps the loss on the whole validation
text in fixed windows (no sampling). The verdict compares, for the validation loss and for the training loss
averaged over each evaluation interval, the RMS over the logged points of attnlab − sdpa with that of
sdpa-math − sdpa: the curves agree within noise when the first is at most NOISE_FACTOR times the second.

--precision bf16 trains as torch users do: the whole step under torch.autocast in bf16 (float32 master weights, AdamW
state and loss), sequences of 4,096 in batches of 2 (the same 8,192 tokens a step, attention now a large part of it),
600 steps. The runs: attnlab (4d's forward with lse and 4d's backward, through attnlab.attention on bf16 q, k, v; it
casts float32 q, k, v to bf16 inside autocast as autocast does for SDPA), sdpa-flash (SDPA's FlashAttention-2 backend:
the baseline), sdpa-cudnn (SDPA's cuDNN backend: the noise), and for scale sdpa-fp32, attention computed in float32
on the same bf16 q, k, v (not judged): the bf16 kernels all round P to bf16 before P·V, and lie ten times closer to
one another than to it (H200, 2026-11-26: training-loss RMS distances 2.3e-05 between the bf16 kernels, 3.7e-04 from
float32 attention).
Speed: after the runs, attnlab and the SDPA runs it is compared with train again, their steps timed in turns
(--speed-rounds rounds of --speed-steps steps each, the order rotating; the median of each run's rounds): the tokens/s
comparison that counts, as every run then meets the same drift of clocks and host. The tokens/s of the training runs
themselves (each minutes long, one after another) are printed and drawn too.
Written: DIR/train_attnlab.json (curves, tokens/s, the verdict), DIR/train_attnlab.png (where matplotlib is;
else draw it elsewhere with --plot). Exit 0 when the curves agree, 1 when they differ, 77 without a GPU.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "goldens"))  # train_model.py, llm_reference.py
sys.path.insert(0, os.path.join(ROOT, "python"))
import llm_reference as ref  # noqa: E402
import train_model as tm  # noqa: E402

# The runs of each precision: attnlab first (a skeleton or a failing kernel stops the run at once), the baseline, and
# the torch run whose distance from the baseline is the noise; the speed line compares attnlab with the faster of `speed`.
MODES = {
    "float32": dict(runs=("attnlab", "sdpa", "sdpa-math"), base="sdpa", noise="sdpa-math", speed=("sdpa", "sdpa-math"),
                    labels={"attnlab": "attnlab (your Task 4c forward + backward)", "sdpa": "SDPA, memory-efficient backend",
                            "sdpa-math": "SDPA, math backend (the noise)"}),
    # bf16: sdpa-fp32 (attention in float32 on the same bf16 q, k, v) is not judged: it shows how far every bf16 kernel
    # lies from the attention they all approximate, ten times the bf16 kernels' distance from one another.
    "bf16": dict(runs=("attnlab", "sdpa-flash", "sdpa-cudnn", "sdpa-fp32"), base="sdpa-flash", noise="sdpa-cudnn",
                 speed=("sdpa-flash", "sdpa-cudnn"),
                 labels={"attnlab": "attnlab (your 4d forward with lse + 4d backward)",
                         "sdpa-flash": "SDPA, FlashAttention-2 backend (bf16)", "sdpa-cudnn": "SDPA, cuDNN backend (bf16, the noise)",
                         "sdpa-fp32": "SDPA in float32 on the bf16 q, k, v (for scale)"}),
}
NOISE_FACTOR = 3.0  # one noise pair is a rough estimate of the noise: attnlab may be up to this far from the baseline
# tools/goldens/train_model.py's GPU size and optimiser (SIZES["cuda"]); the test mode's is small and quick on 2 cores.
GPU = dict(layers=6, width=384, seq=256, batch=32, lr=1e-3, dropout=0.2, weight_decay=0.1, steps=1500, eval_every=50,
           val_every=50, val_windows=None)
# bf16: the same model and tokens per step in sequences of 4,096, where attention is a large part of a step
GPU_BF16 = dict(GPU, seq=4096, batch=2, steps=600)
TEST = dict(layers=2, width=64, seq=64, batch=4, lr=1e-3, dropout=0.2, weight_decay=0.1, steps=6, eval_every=3,
            val_every=50, val_windows=8)


class CourseGPT(tm.GPT2):
    """tools/goldens/train_model.py's GPT2 with the attention passed in: `attend(q, k, v)` on [B, H, T, D], causal,
    in place of GPT2.attend (python/tests/test_bridge.py checks they agree)."""

    def __init__(self, *args, attend, **kwargs):
        super().__init__(*args, **kwargs)
        self.attend = attend


def attention_for(name, device, bf16):
    """(attend, context manager factory) for a run. The test mode (CPU) runs the CPU attention on every side. bf16:
    the whole step under torch.autocast in bf16 (float32 weights, AdamW's state and the loss); q, k, v reach the attention
    in bf16 on every side (autocast casts SDPA's; attnlab's are cast here, in the copy that makes them contiguous)."""
    import contextlib

    def context(backends=None):
        def enter():
            stack = contextlib.ExitStack()
            if bf16:
                stack.enter_context(torch.autocast(device, dtype=torch.bfloat16))
            if backends:
                from torch.nn.attention import sdpa_kernel
                stack.enter_context(sdpa_kernel(backends))
            return stack
        return enter
    if device == "cpu":
        sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
        attend = (lambda q, k, v: sdpa(q, k, v, is_causal=True)) if sdpa else ref.causal_attention
        return attend, context()
    if name == "attnlab":
        import attnlab
        # q, k, v arrive as views of the projection (float32 under autocast: the bias is added after the bf16 matmul);
        # one copy makes each contiguous and, in bf16 mode, bf16 — as SDPA's autocast makes one (cast) copy
        dtype = torch.bfloat16 if bf16 else None
        return (lambda q, k, v: attnlab.attention(*(t.to(dtype or t.dtype, memory_format=torch.contiguous_format) for t in (q, k, v)),
                                                  causal=True)), context()
    from torch.nn.attention import SDPBackend
    if name == "sdpa-fp32":  # float32 attention of the bf16 inputs (autocast would cast SDPA's inputs back to bf16)
        def attend_fp32(q, k, v):
            with torch.autocast(device, enabled=False):
                return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True).to(q.dtype)
        return attend_fp32, context([SDPBackend.EFFICIENT_ATTENTION])
    backend = {"sdpa": SDPBackend.EFFICIENT_ATTENTION, "sdpa-math": SDPBackend.MATH, "sdpa-flash": SDPBackend.FLASH_ATTENTION,
               "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}[name]
    return (lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)), context([backend])


def load_tokens(path):
    """The King James text as GPT-2 tokens: from a file of train_model.py --write-tokens, or tokenised here."""
    if path:
        return torch.load(path)["corpus"].long()
    enc = ref.tiktoken_gpt2(os.path.join(ROOT, ".deps", "gpt2.tiktoken"))
    return torch.tensor(enc.encode_ordinary(tm.corpus()), dtype=torch.long)


def split(ids, every):
    """train_model.py's GPU split: every `every`-th block of 4,096 tokens (from the middle one) is validation."""
    blocks = list(torch.split(ids, 4096))
    val = torch.cat(blocks[every // 2::every])
    train = torch.cat([b for i, b in enumerate(blocks) if i % every != every // 2])
    return train, val


def val_windows(val, seq, limit=None):
    """The whole validation text in consecutive windows of seq + 1 tokens: (inputs, targets), fixed."""
    n = (len(val) - 1) // seq
    if limit:
        n = min(n, limit)
    starts = torch.arange(n) * seq
    x = torch.stack([val[s:s + seq] for s in starts])
    y = torch.stack([val[s + 1:s + seq + 1] for s in starts])
    return x, y


def build(name, mode, cfg, device, seed):
    """A run's model (built on the CPU after seeding: every run of a seed starts from the same weights), its AdamW, and
    the context its steps run in (autocast in bf16, the SDPA backend)."""
    attend, context = attention_for(name, device, mode == "bf16")
    torch.manual_seed(seed)  # the same initial weights and the same dropout masks in every run
    model = CourseGPT(50257, max(256, cfg["seq"]), cfg["width"], cfg["layers"], cfg["width"] // 64, cfg["dropout"],
                      attend=attend).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], betas=(0.9, 0.95), weight_decay=cfg["weight_decay"])
    return model, opt, context


def train_step(model, opt, train, cfg, g, device, lr):
    """One optimiser step on a batch drawn with generator g; returns the loss (on the device, no synchronisation)."""
    for group in opt.param_groups:
        group["lr"] = lr
    seq, bsz = cfg["seq"], cfg["batch"]
    starts = torch.randint(0, len(train) - seq - 1, (bsz,), generator=g)
    x = torch.stack([train[s:s + seq] for s in starts]).to(device)
    y = torch.stack([train[s + 1:s + seq + 1] for s in starts]).to(device)
    loss = torch.nn.functional.cross_entropy(model(x).float().flatten(0, 1), y.flatten())
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.detach()


def speed_in_turns(mode, cfg, train, device, seed, rounds, steps):
    """tokens/s of attnlab and the SDPA runs the speed line compares, their steps timed in turns on the same GPU: one
    model each, then `rounds` rounds (after one of warm-up) in which each run trains `steps` steps timed alone, the order
    rotating from round to round. The training runs each take minutes, one after another, and what else changes over
    minutes (the clocks, the temperature, the host) moves their tokens/s by as much as the runs differ (docs/perf.md); in
    turns, every run meets the same drift. Returns ({run: the median of its rounds' tokens/s}, {run: every round's})."""
    names = ("attnlab",) + tuple(MODES[mode]["speed"])
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    built = {n: build(n, mode, cfg, device, seed) for n in names}
    rates = {n: [] for n in names}
    for r in range(rounds + 1):  # round 0 warms up (allocator, autotuning, the clocks)
        for n in names[r % len(names):] + names[:r % len(names)]:
            model, opt, context = built[n]
            g = torch.Generator().manual_seed(seed + r)  # the same batches for every run in a round
            with context():
                sync()
                t0 = time.perf_counter()
                for _ in range(steps):
                    train_step(model, opt, train, cfg, g, device, 0.1 * cfg["lr"])
                sync()
            if r:
                rates[n].append(steps * cfg["batch"] * cfg["seq"] / (time.perf_counter() - t0))
    del built
    return {n: sorted(v)[len(v) // 2] for n, v in rates.items()}, rates


def train_one(name, mode, cfg, data, device, seed, max_minutes, stop_at=None):
    """One run: returns its log (every step's training loss, validation losses, tokens/s). stop_at: the step
    an earlier run was cut short at (the schedule still follows cfg["steps"])."""
    train, (vx, vy) = data
    model, opt, context = build(name, mode, cfg, device, seed)
    g = torch.Generator().manual_seed(seed)  # the same batches in every run
    steps, seq, bsz, warmup = cfg["steps"], cfg["seq"], cfg["batch"], 50
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def val_loss():
        model.eval()
        total = 0.0
        with torch.no_grad():
            for i in range(0, len(vx), bsz):
                x, y = vx[i:i + bsz].to(device), vy[i:i + bsz].to(device)
                total += torch.nn.functional.cross_entropy(model(x).float().flatten(0, 1), y.flatten(), reduction="sum").item()
        model.train()
        return total / vy.numel()

    losses = torch.zeros(steps, device=device)
    label = MODES[mode]["labels"][name] + (" [--test: the CPU attention]" if device == "cpu" else "")
    log = {"label": label, "eval_steps": [], "val_loss": [], "cut_short": False}
    trained_s, timed_steps, t_start = 0.0, 0, time.time()
    sync()
    t0 = time.time()
    with context():
        for step in range(1, steps + 1):
            lr = cfg["lr"] * min(1.0, step / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, step / steps))))
            losses[step - 1] = train_step(model, opt, train, cfg, g, device, lr)
            out_of_time = (max_minutes and time.time() - t_start > max_minutes * 60) or step == stop_at
            if step % cfg["eval_every"] == 0 or step == steps or out_of_time:
                sync()
                prev = log["eval_steps"][-1] if log["eval_steps"] else 0
                if prev:  # tokens/s leaves out the first interval (start-up) and the evaluations
                    trained_s += time.time() - t0
                    timed_steps += step - prev
                log["eval_steps"].append(step)
                log["val_loss"].append(val_loss())
                print(f"train_attnlab: {name}: step {step}, loss {losses[prev:step].mean().item():.4f} (interval mean), "
                      f"validation {log['val_loss'][-1]:.4f}, {time.time() - t_start:.0f} s", flush=True)
                sync()
                t0 = time.time()
            if out_of_time:
                log["cut_short"] = True
                why = f"--max-minutes {max_minutes:g}" if step != stop_at else "where an earlier run stopped"
                print(f"train_attnlab: {name}: stopped at step {step} of {steps}: {why}", flush=True)
                break
    if not torch.isfinite(losses[:step]).all():
        raise RuntimeError(f"{name}: the training loss is not finite")
    log["train_loss"] = losses[:step].tolist()
    log["steps_done"] = step
    log["tokens_per_s"] = timed_steps * bsz * seq / trained_s if trained_s > 0 else None
    log["seconds"] = time.time() - t_start
    return log


def interval_means(log):
    """The training loss averaged over each evaluation interval, at the evaluation steps."""
    out, prev = [], 0
    for s in log["eval_steps"]:
        chunk = log["train_loss"][prev:s]
        out.append(sum(chunk) / len(chunk))
        prev = s
    return out


def verdict(runs, mode="float32", factor=NOISE_FACTOR):
    """Whether attnlab's curves agree with the baseline's within the noise (the noise run against the baseline), over
    the evaluation steps all three reached. Returns a dict with the numbers and `agree`."""
    m = MODES[mode]
    common = sorted(set.intersection(*(set(runs[n]["eval_steps"]) for n in m["runs"])))
    if not common:
        return {"agree": False, "why": "no evaluation step common to the runs"}
    out = {"steps": common, "factor": factor, "agree": True, "base": m["base"], "noise": m["noise"]}
    for curve in ("validation", "training"):
        series = {}
        for n in m["runs"]:
            values = runs[n]["val_loss"] if curve == "validation" else interval_means(runs[n])
            at = dict(zip(runs[n]["eval_steps"], values))
            series[n] = [at[s] for s in common]

        def rms(d):
            return math.sqrt(sum(x * x for x in d) / len(d))
        d_attn = [a - b for a, b in zip(series["attnlab"], series[m["base"]])]
        d_noise = [a - b for a, b in zip(series[m["noise"]], series[m["base"]])]
        c = {"attnlab_rms": rms(d_attn), "attnlab_max": max(map(abs, d_attn)), "attnlab_mean": sum(d_attn) / len(d_attn),
             "noise_rms": rms(d_noise), "noise_max": max(map(abs, d_noise)), "noise_mean": sum(d_noise) / len(d_noise)}
        c["agree"] = c["attnlab_rms"] <= factor * c["noise_rms"]
        out[curve] = c
        out["agree"] = out["agree"] and c["agree"]
    return out


def verdict_lines(v):
    if "why" in v:
        return [f"train_attnlab: no verdict: {v['why']}"]
    lines = []
    base, noise = v.get("base", "sdpa"), v.get("noise", "sdpa-math")
    for curve in ("validation", "training"):
        c = v[curve]
        what = "validation loss" if curve == "validation" else "training loss (mean of each interval)"
        lines.append(f"train_attnlab: {what}: attnlab − {base} RMS {c['attnlab_rms']:.2e} (max {c['attnlab_max']:.2e}, "
                     f"mean {c['attnlab_mean']:+.2e}); noise, {noise} − {base}: RMS {c['noise_rms']:.2e} "
                     f"(max {c['noise_max']:.2e}, mean {c['noise_mean']:+.2e}) → "
                     f"{'within' if c['agree'] else 'NOT within'} {v['factor']:g}× the noise")
    lines.append(f"train_attnlab: {'AGREE' if v['agree'] else 'DIFFER'}: the curves of attnlab and {base} "
                 f"{'agree' if v['agree'] else 'do not agree'} within the run-to-run noise "
                 f"({len(v['steps'])} evaluation points, steps {v['steps'][0]}–{v['steps'][-1]})")
    return lines


def speed_lines(runs, mode, in_turns=None):
    """attnlab's tokens/s against the faster SDPA run in its precision: during the training runs, and (the comparison
    that counts, where measured) with the steps timed in turns (speed_in_turns)."""
    def line(what, tps):
        sdpa = {n: tps[n] for n in MODES[mode]["speed"] if tps.get(n)}
        if not tps.get("attnlab") or not sdpa:
            return f"train_attnlab: tokens/s {what}: not measured for every run (too few steps)"
        best = max(sdpa, key=sdpa.get)
        return (f"train_attnlab: tokens/s {what}: " + ", ".join(f"{n} {t:,.0f}" for n, t in tps.items() if t) +
                f"; attnlab at {tps['attnlab'] / sdpa[best]:.3f}× the faster SDPA run ({best})")
    lines = [line("during training", {n: runs[n].get("tokens_per_s") for n in MODES[mode]["runs"]})]
    if in_turns:
        lines.append(line(f"in turns ({in_turns['rounds']} rounds of {in_turns['steps']} steps, median)", in_turns["median"]))
    return lines


def plot(json_path, png_path=None):
    """The picture: training loss (interval means), validation loss, and each curve's distance from sdpa."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(json_path) as f:
        result = json.load(f)
    runs, v = result["runs"], result["verdict"]
    mode = MODES[result.get("precision", "float32")]
    base = mode["base"]
    png_path = png_path or os.path.splitext(json_path)[0] + ".png"
    colors = dict(zip(mode["runs"], ("tab:red", "tab:blue", "tab:gray", "tab:green")))  # runs: attnlab, base, noise, …
    styles = dict(zip(mode["runs"], ("-", "--", ":", "-.")))
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    for n in mode["runs"]:
        r = runs[n]
        tps = f"{r['tokens_per_s']:,.0f} tokens/s" if r.get("tokens_per_s") else "tokens/s not measured"
        label = f"{r['label']}: {tps}"
        axes[0].plot(r["eval_steps"], interval_means(r), styles[n], color=colors[n], label=label, lw=1.6)
        axes[1].plot(r["eval_steps"], r["val_loss"], styles[n], color=colors[n], label=label, lw=1.6, marker=".")
    for n in [r for r in mode["runs"] if r != base]:
        at = {c: dict(zip(runs[m]["eval_steps"], runs[m]["val_loss"])) for c, m in (("x", n), ("b", base))}
        steps = [s for s in v.get("steps", []) if s in at["x"] and s in at["b"]]
        axes[2].plot(steps, [at["x"][s] - at["b"][s] for s in steps], styles[n], color=colors[n], marker=".",
                     label=f"{n} − {base}, validation")
        tr = {m: dict(zip(runs[m]["eval_steps"], interval_means(runs[m]))) for m in (n, base)}
        axes[2].plot(steps, [tr[n][s] - tr[base][s] for s in steps], styles[n], color=colors[n], alpha=0.45,
                     label=f"{n} − {base}, training (interval mean)")
    axes[2].axhline(0.0, color="black", lw=0.6)
    cfg = result["config"]
    axes[0].set_title(f"training loss (mean of each {cfg['eval_every']} steps)")
    axes[1].set_title("validation loss (the whole held-out text)")
    axes[2].set_title(f"distance from {mode['labels'][base]}")
    for ax in axes:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("cross-entropy (nats)")
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8)
    axes[2].legend(fontsize=8)
    precision = ("bf16 autocast (float32 weights and optimiser)" if result.get("precision") == "bf16"
                 else "float32, TF32 off")
    head = (f"Task 7's model ({cfg['layers']} layers × {cfg['width']}, seq {cfg['seq']}, batch {cfg['batch']}), {precision}, "
            f"one seed and data order — {result['device']}, torch {result['torch']}")
    if "why" in v:
        tail = v["why"]
    else:
        tail = (f"{'AGREE' if v['agree'] else 'DIFFER'}: validation RMS distance {v['validation']['attnlab_rms']:.2e} "
                f"vs noise {v['validation']['noise_rms']:.2e}; training {v['training']['attnlab_rms']:.2e} vs "
                f"{v['training']['noise_rms']:.2e} (within {v['factor']:g}× the noise: "
                f"{'yes' if v['agree'] else 'no'})")
    turns = result.get("speed_in_turns")
    if turns:
        tail += (f"\ntokens/s with the steps timed in turns ({turns['rounds']} rounds of {turns['steps']}, median): " +
                 ", ".join(f"{n} {t:,.0f}" for n, t in turns["median"].items()))
    fig.suptitle(head + "\n" + tail, fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return png_path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "train-attnlab"))
    ap.add_argument("--steps", type=int, help=f"training steps of each run (default {GPU['steps']}; --test {TEST['steps']})")
    ap.add_argument("--eval-every", type=int, help=f"steps between evaluations (default {GPU['eval_every']})")
    ap.add_argument("--max-minutes", type=float, help="stop a run after this long (the verdict then uses the steps "
                                                      "all runs reached)")
    ap.add_argument("--tokens", help="the text as a file of tools/goldens/train_model.py --write-tokens (default: "
                                     "build/kjv-tokens.pt where it exists, else the Bible package and tiktoken)")
    ap.add_argument("--seed", type=int, default=1611)
    ap.add_argument("--speed-rounds", type=int, help="after training, rounds of the speed comparison in turns (default 7; "
                                                     "--test 1; 0: none)")
    ap.add_argument("--speed-steps", type=int, help="steps each run trains, timed, in a round (default 20; --test 1)")
    ap.add_argument("--precision", choices=sorted(MODES), default="float32",
                    help="float32 (Task 4c against SDPA's memory-efficient and math backends, sequences of 256) or bf16 "
                         "(4d under torch.autocast against SDPA's FlashAttention-2 and cuDNN backends, sequences of 4,096)")
    ap.add_argument("--test", action="store_true", help="the CPU, a small model, a few steps, the CPU attention on every "
                                                         "side: the script end to end without a GPU")
    ap.add_argument("--plot", metavar="JSON", help="only draw the picture of a run's JSON")
    ap.add_argument("--png", help="where --plot draws (default: beside the JSON)")
    args = ap.parse_args()
    if args.plot:
        print(f"train_attnlab: wrote {plot(args.plot, args.png)}")
        return 0
    if not args.test and not torch.cuda.is_available():
        print("skipped: no CUDA device (torch sees none); tools/vs_torch/train_attnlab.py --test runs it on the CPU")
        return 77
    device = "cpu" if args.test else "cuda"
    mode = args.precision
    cfg = dict(TEST if args.test else GPU_BF16 if mode == "bf16" else GPU)
    cfg.update({k: v for k, v in (("steps", args.steps), ("eval_every", args.eval_every)) if v})
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 (outside autocast) in full: only the attention differs
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")
    tokens = args.tokens or (os.path.join(ROOT, "build", "kjv-tokens.pt")
                             if os.path.isfile(os.path.join(ROOT, "build", "kjv-tokens.pt")) else None)
    ids = load_tokens(tokens)
    train, val = split(ids, cfg["val_every"])
    data = (train, val_windows(val, cfg["seq"], cfg["val_windows"]))
    where = torch.cuda.get_device_name() if device == "cuda" else "CPU (--test: the CPU attention on every side)"
    lib = ""
    if device == "cuda":
        import attnlab
        lib = f"; attnlab {attnlab.library_path()[0]} ({attnlab.impl()})"
    print(f"train_attnlab: {where}, torch {torch.__version__}{lib}; {mode}; {cfg['layers']} layers × {cfg['width']} wide, "
          f"sequences of {cfg['seq']}, batches of {cfg['batch']}, {cfg['steps']} steps, evaluation every "
          f"{cfg['eval_every']} on {data[1][0].shape[0]} windows; {len(ids)} tokens ({len(train)} train)", flush=True)
    os.makedirs(args.out, exist_ok=True)
    runs, stop_at = {}, None
    for name in MODES[mode]["runs"]:
        runs[name] = train_one(name, mode, cfg, data, device, args.seed, args.max_minutes, stop_at)
        if runs[name]["cut_short"]:  # the later runs need go no further: the verdict compares common steps
            stop_at = runs[name]["steps_done"]
        tps = runs[name]["tokens_per_s"]
        print(f"train_attnlab: {name}: {runs[name]['steps_done']} steps in {runs[name]['seconds']:.0f} s, "
              f"{'%.0f tokens/s' % tps if tps else 'tokens/s not measured'}", flush=True)
    v = verdict(runs, mode)
    rounds = args.speed_rounds if args.speed_rounds is not None else (1 if args.test else 7)
    in_turns = None
    if rounds > 0:
        steps = args.speed_steps or (1 if args.test else 20)
        median, every = speed_in_turns(mode, cfg, train, device, args.seed, rounds, steps)
        in_turns = {"rounds": rounds, "steps": steps, "median": median, "every_round": every}
    result = {"config": cfg, "precision": mode, "device": where, "torch": torch.__version__, "seed": args.seed, "runs": runs,
              "verdict": v, "speed_in_turns": in_turns, "date": time.strftime("%Y-%m-%d")}
    json_path = os.path.join(args.out, "train_attnlab.json")
    with open(json_path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"train_attnlab: wrote {json_path}")
    for line in verdict_lines(v) + speed_lines(runs, mode, in_turns):
        print(line, flush=True)
    try:
        print(f"train_attnlab: wrote {plot(json_path)}")
    except ImportError:
        print(f"train_attnlab: matplotlib is not here: draw the picture elsewhere with tools/vs_torch/train_attnlab.py --plot {json_path}")
    return 0 if v["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
