#!/usr/bin/env python3
"""The bf16 forward and backward beside torch's backends and FA4, from several rounds of the same benchmarks.

Why rounds: on the GPU machine every side's TFLOP/s moves between calls by a few per cent (clocks, the neighbours of a
shared host), as much as the kernels differ. tools/vs_torch/bf16_rounds.sh runs the four programs in turn, ROUNDS times, in
one call (the order rotating), and writes each round's logs to DIR/rK/:

    fwd.log        build/<impl>/bin/bench_task4_bf16 --grid         the course's forward (4b)
    bwd.log        build/<impl>/bin/bench_task4_bf16_backward       the course's backward (4d)
    torch_fwd.log  tools/vs_torch/sdpa_bf16.py --grid               cuDNN, FA2 (and FA4 where it is installed)
    torch_bwd.log  tools/vs_torch/sdpa_bf16_backward.py             the same, backward

This script reads them and prints, per direction, each side's median over the rounds (and its range), and the
course's kernel over the best library's median: one table that a round's luck does not decide. "course" is whatever the
two benchmarks were built from: the reference (course staff) or your kernels (IMPL=skeleton in the kit). A cell with
fewer values than rounds (a program failed or timed out in a round) says so: "n=2". The first line says how each side
was timed, from the logs' own header lines, and warns when the sides were timed differently (the torch scripts once
counted a library's host work past the L2 flush while the C++ benches did not: docs/perf.md, "GPU time only").

    tools/vs_torch/rounds_table.py DIR [--markdown]
"""
import argparse
import collections
import math
import os
import re
import statistics
import sys

SHAPE = re.compile(r"B=\d+ H=\d+ S=\d+ D=\d+(?: causal)?")
TFLOPS = re.compile(r"([0-9.]+) TFLOP/s")
SIDES = ("course", "cuDNN", "FA2", "FA4")
LIBRARIES = ("cuDNN", "FA2", "FA4")
# a torch forward line's name → the side it times (sdpa_bf16.py; the memory-efficient backend is not compared)
TORCH_FWD = (("torch sdpa cudnn", "cuDNN"), ("torch sdpa flash", "FA2"), ("FA4", "FA4"))


def parse_log(text, role):
    """{(shape, side): TFLOP/s} from one log. role: 'course' (the project's benches) or 'torch' (the torch scripts)."""
    found, shape = {}, None
    for line in text.splitlines():
        m = SHAPE.search(line)
        if m and line.lstrip().startswith("B="):
            shape = m.group(0)
        if "TFLOP/s" not in line or shape is None:
            continue
        if role == "course":  # one kernel a shape: the reference (or your submission)
            t = TFLOPS.search(line)
            if t:
                found[(shape, "course")] = float(t.group(1))
        elif "|" in line:  # backward: "B=… cuDNN 0.974 ms 352.9 TFLOP/s | FA2 … | FA4 …"
            for part in (line[m.end():] if m else line).split("|"):
                words, t = part.split(), TFLOPS.search(part)
                if words and t and words[0] in LIBRARIES:
                    found[(shape, words[0])] = float(t.group(1))
        else:  # forward: one backend a line under its shape
            name = line.strip()
            side = next((s for prefix, s in TORCH_FWD if name.startswith(prefix)), None)
            t = TFLOPS.search(line)
            if side and t:
                found[(shape, side)] = float(t.group(1))
    return found


FILES = {"forward": (("fwd.log", "course"), ("torch_fwd.log", "torch")),
         "backward": (("bwd.log", "course"), ("torch_bwd.log", "torch"))}


def read_logs(root):
    """[(direction, role, text)] of every round's logs, read once, and the round count."""
    rounds = sorted((d for d in os.listdir(root) if re.fullmatch(r"r\d+", d)), key=lambda d: int(d[1:]))
    if not rounds:
        raise SystemExit(f"rounds_table: no round folders r1, r2, … in {root}")
    logs = []
    for r in rounds:
        for direction, files in FILES.items():
            for name, role in files:
                path = os.path.join(root, r, name)
                if os.path.exists(path):
                    with open(path, encoding="utf-8", errors="replace") as f:
                        logs.append((direction, role, f.read()))
    return logs, len(rounds)


def collect(logs):
    """{direction: {(shape, side): [TFLOP/s of each round]}} and the shapes in first-seen order."""
    data = {d: collections.defaultdict(list) for d in FILES}
    shapes = {d: [] for d in FILES}
    for direction, role, text in logs:
        for (shape, side), v in parse_log(text, role).items():
            data[direction][(shape, side)].append(v)
            if shape not in shapes[direction]:
                shapes[direction].append(shape)
    return data, shapes


def read_rounds(root):
    """collect()'s two results and the round count."""
    logs, n = read_logs(root)
    return (*collect(logs), n)


# How a log says it timed (its header line), in the words of the table's first line.
TIMING_WORDS = (("GPU time only", "GPU time only"),
                ("host work past the flush counted", "host work past the flush counted"),
                ("device synchronised", "host work inside (device synchronised)"))


def timing_of(text):
    return next((words for phrase, words in TIMING_WORDS if phrase in text), "not said")


def timings(logs):
    """{'course' | 'torch': the set of timings its logs state} over every round and direction."""
    found = collections.defaultdict(set)
    for _, role, text in logs:
        found[role].add(timing_of(text))
    return found


def read_timings(root):
    return timings(read_logs(root)[0])


def timing_line(found):
    said = {role: ", ".join(sorted(v)) for role, v in sorted(found.items())}
    if len(set().union(*found.values())) == 1:
        return f"timing: {next(iter(said.values()))} on every side"
    return ("timing: NOT THE SAME ON EVERY SIDE, the ratios compare unlike times — "
            + "; ".join(f"{role}: {words}" for role, words in said.items()))


def table(values, shapes):
    """Rows per shape: the median of each side, its range, and course / the best library's median."""
    rows = []
    for shape in shapes:
        cells = {s: values.get((shape, s), []) for s in SIDES}
        medians = {s: statistics.median(v) for s, v in cells.items() if v}
        best = max((medians[s] for s in LIBRARIES if s in medians), default=None)
        ratio = medians["course"] / best if best and "course" in medians else None
        rows.append((shape, cells, medians, ratio))
    return rows


def cell(v, med, rounds):
    if not v:
        return "—"
    text = f"{med:.1f}" if len(v) == 1 else f"{med:.1f} ({math.floor(min(v))}–{math.ceil(max(v))})"  # the range holds the median
    return text if len(v) == rounds else f"{text} n={len(v)}"


def report(data, shapes, n, markdown=False, found_timings=None):
    out = [f"{n} rounds; each cell: the median TFLOP/s (the rounds' range); ratio: the course's median over the best "
           "library's median"]
    if found_timings:
        out.append(timing_line(found_timings))
    for direction in FILES:
        rows = table(data[direction], shapes[direction])
        if not rows:
            continue
        out.append("")
        out.append(f"{direction}:")
        head = ["B·H·S·D", *SIDES, "course / best"]
        if markdown:
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "---|" * len(head))
        else:
            out.append("  ".join(f"{h:>24}" if i == 0 else f"{h:>17}" for i, h in enumerate(head)))
        for shape, cells, medians, ratio in rows:
            vals = [cell(cells[s], medians.get(s), n) for s in SIDES]
            r = f"{ratio:.3f}" if ratio else "—"
            if markdown:
                out.append("| " + " | ".join([shape, *vals, r]) + " |")
            else:
                out.append("  ".join([f"{shape:>24}", *(f"{v:>17}" for v in vals), f"{r:>17}"]))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="the folder with r1/, r2/, … (tools/vs_torch/bf16_rounds.sh writes it)")
    ap.add_argument("--markdown", action="store_true", help="markdown tables (for docs/perf.md)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.dir):
        print(f"rounds_table: {args.dir}: not a folder", file=sys.stderr)
        return 2
    logs, n = read_logs(args.dir)
    print(report(*collect(logs), n, args.markdown, timings(logs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
