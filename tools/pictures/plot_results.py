#!/usr/bin/env python3
"""Pictures of a grading run's speed: a roofline per GPU task and the course's speedups.

    tools/pictures/plot_results.py OUT_DIR        (run by `make grade` after the grader)

Reads OUT_DIR/results.json (the grader's: per timed shape a test whose extra_data.state is
"performance", with ms, reference_ms, tflops, gbps, baselines_ms) and writes into OUT_DIR:
  roofline_task2.png, roofline_task4.png,
  roofline_task5.png                      the roofline of the run's measured ceilings (copy bandwidth,
                                          cuBLAS SGEMM) with the submission's and the reference's time
                                          at every timed shape, at its arithmetic intensity (FLOPs / bytes)
  speedups.png                            each shape's baseline time / the submission's time, and Task 6's
                                          no-cache step / KV-cache step (its cases' metrics)
and appends (or replaces) a "## Pictures" section of image links in OUT_DIR/Results.md.

The ceilings come from results.json's top-level extra_data.ceilings ({"4": {"copy_gbps": …,
"sgemm_tflops": …, "gpu": …}, …}) or, where it has none, from Results.md's line "…: ceilings measured
in the same run: copy N GB/s, cuBLAS SGEMM N TFLOP/s." of the task's section.
FLOPs and bytes per shape: the grader's (each row's extra_data flops and bytes; Task 2's softmax counts 5
FLOPs an element), else parsed from its name (e.g. "B=64 H=32 S=4096 D=128 causal",
"decode B=1 H=32 L=1024 D=128"): Task 4 4·B·H·S²·D (halved when causal) over 4·B·H·S·D·4 bytes
(Q, K, V, O); Task 5 4·B·H·L·D over 2·B·H·L·D·4 bytes (K and V read once).
Without matplotlib: a note in Results.md instead, exit 0. Nothing timed: a note, exit 0.
"""
import json
import os
import re
import sys

TASKS = (2, 4, 5)
SECTION = "## Pictures"
CEILING_RE = re.compile(r"ceilings measured in the same run: copy ([\d.]+) GB/s, cuBLAS SGEMM ([\d.]+) TFLOP/s")


def parse_shape(name):
    """{'B', 'H', 'S' | 'L', 'D', 'causal', 'decode'} from a shape name; None when it does not parse."""
    nums = {k: int(v) for k, v in re.findall(r"\b(B|H|S|L|D|Sq|Sk)=(\d+)", name)}
    if not {"B", "H", "D"} <= nums.keys():
        return None
    if "L" in nums:
        return {"B": nums["B"], "H": nums["H"], "L": nums["L"], "D": nums["D"], "decode": True, "causal": False}
    if "S" not in nums and "Sq" in nums and nums.get("Sq") == nums.get("Sk"):
        nums["S"] = nums["Sq"]
    if "S" not in nums:
        return None
    return {"B": nums["B"], "H": nums["H"], "S": nums["S"], "D": nums["D"], "decode": False,
            "causal": re.search(r"\bcausal\b", name) is not None}


def flops_bytes(task, s):
    """(FLOPs, bytes) of a shape of Task 4 or Task 5."""
    if task == 5 or s["decode"]:
        n = s["B"] * s["H"] * s["L"] * s["D"]
        return 4.0 * n, 2.0 * n * 4
    n = s["B"] * s["H"] * s["S"] * s["D"]
    return 4.0 * n * s["S"] * (0.5 if s["causal"] else 1.0), 4.0 * n * 4


def short(name):
    return name.replace("decode ", "").replace(" H=32", "").replace(" D=128", "").replace("softmax rows=", "softmax ").replace(" cols=", "×")


def perf_rows(results):
    """{task: [row]} of the timed shapes: name, ms, reference_ms, baselines_ms."""
    rows = {}
    for t in results.get("tests", []):
        x = t.get("extra_data") or {}
        if x.get("state") != "performance" or not x.get("ms"):
            continue
        task = int(x.get("task", 0))
        name = re.sub(r"^Task \d+: performance ", "", t.get("name", ""))
        rows.setdefault(task, []).append({"name": name, "ms": float(x["ms"]), "reference_ms": float(x.get("reference_ms") or 0),
                                          "baselines_ms": {k: float(v) for k, v in (x.get("baselines_ms") or {}).items() if v},
                                          "flops": float(x.get("flops") or 0), "bytes": float(x.get("bytes") or 0)})
    return rows


def decode_step_rows(results):
    """Task 6's cache-vs-recompute: per case that measured both (metrics "TBT median ms" and "no-cache
    step ms"), a row whose time is the KV-cache step and whose baseline is the no-cache step."""
    rows = []
    for t in results.get("tests", []):
        x = t.get("extra_data") or {}
        m = x.get("metrics") or {}
        if int(x.get("task", 0)) != 6 or not m.get("TBT median ms") or not m.get("no-cache step ms"):
            continue
        name = re.sub(r"^Task \d+: ", "", t.get("name", "")).split(",")[0]
        rows.append({"name": name, "ms": float(m["TBT median ms"]), "reference_ms": 0.0,
                     "baselines_ms": {"no cache (recompute every position)": float(m["no-cache step ms"])}})
    return rows


def ceilings(results, results_md):
    """{task: {'copy_gbps', 'sgemm_tflops', 'gpu'}} from results.json, else from Results.md's text."""
    out = {}
    for k, v in ((results.get("extra_data") or {}).get("ceilings") or {}).items():
        if v and v.get("copy_gbps") and v.get("sgemm_tflops"):
            out[int(k)] = {"copy_gbps": float(v["copy_gbps"]), "sgemm_tflops": float(v["sgemm_tflops"]), "gpu": v.get("gpu", "")}
    task = None
    for line in results_md.splitlines():
        m = re.match(r"## Task (\d+)\b", line)
        if m:
            task = int(m.group(1))
            continue
        m = CEILING_RE.search(line)
        if m and task is not None and task not in out:
            out[task] = {"copy_gbps": float(m.group(1)), "sgemm_tflops": float(m.group(2)),
                         "gpu": line.split(": ceilings")[0].strip()}
    return out


def roofline(plt, task, rows, ceil, path):
    copy_bps, peak = ceil["copy_gbps"] * 1e9, ceil["sgemm_tflops"] * 1e12
    ridge = peak / copy_bps
    fig, ax = plt.subplots(figsize=(9, 6), dpi=110)
    colors = plt.get_cmap("tab10").colors
    pts, rates = [], []
    for i, r in enumerate(rows):
        if r.get("flops") and r.get("bytes"):  # the grader's own count (results.json)
            fl, by = r["flops"], r["bytes"]
        else:
            s = parse_shape(r["name"])
            if s is None:
                continue
            fl, by = flops_bytes(task, s)
        ai = fl / by
        c = colors[i % len(colors)]
        rates.append(fl / (r["ms"] * 1e-3) / 1e12)
        if r["reference_ms"] > 0:
            rates.append(fl / (r["reference_ms"] * 1e-3) / 1e12)
        ax.scatter([ai], [fl / (r["ms"] * 1e-3) / 1e12], s=70, color=c, marker="o", zorder=3, label=f"{short(r['name'])}")
        pts.append(ai)
        if r["reference_ms"] > 0:
            ax.scatter([ai], [fl / (r["reference_ms"] * 1e-3) / 1e12], s=110, facecolors="none", edgecolors=[c],
                       marker="s", linewidths=1.6, zorder=3)
    if not pts:
        plt.close(fig)
        return False
    lo, hi = min(min(pts), ridge) / 8, max(max(pts), ridge) * 8
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [min(peak, copy_bps * x) / 1e12 for x in xs], color="black", linewidth=2, zorder=2)
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(min(rates), copy_bps * lo / 1e12) / 3, peak / 1e12 * 3)
    # The roofs' labels: on the slope (bandwidth) and on the flat (SGEMM).
    # The bandwidth roof's label runs along its slope, just above it, near the left edge.
    x0, x1 = lo * 1.6, lo * 16
    (px0, py0), (px1, py1) = ax.transData.transform([(x0, copy_bps * x0 / 1e12), (x1, copy_bps * x1 / 1e12)])
    import math
    ax.annotate(f"copy bandwidth {ceil['copy_gbps']:.0f} GB/s", xy=(x0, copy_bps * x0 / 1e12), xytext=(0, 6),
                textcoords="offset points", ha="left", va="bottom", fontsize=10,
                rotation=math.degrees(math.atan2(py1 - py0, px1 - px0)), rotation_mode="anchor")
    ax.annotate(f"cuBLAS SGEMM {ceil['sgemm_tflops']:.1f} TFLOP/s", xy=(hi / 1.3, peak / 1e12), xytext=(0, 6),
                textcoords="offset points", ha="right", va="bottom", fontsize=10)
    ax.axvline(ridge, color="gray", linestyle=":", linewidth=1)
    ax.annotate(f"ridge point {ridge:.0f} FLOP/B", xy=(ridge, ax.get_ylim()[0]), xytext=(-4, 6), textcoords="offset points",
                ha="right", va="bottom", fontsize=8, color="gray")
    ax.set_xlabel("arithmetic intensity (FLOP / byte of the shape's minimum traffic)")
    ax.set_ylabel("TFLOP/s (fp32)")
    what = {2: "softmax and GEMMs", 4: "FlashAttention forward"}.get(task, "decode attention (K and V read once)")
    ax.set_title(f"Task {task}: {what} — {ceil.get('gpu') or 'GPU'}", fontsize=11)
    ax.grid(True, which="both", alpha=0.25)
    # Legend: the shapes (colour) and what the markers are.
    from matplotlib.lines import Line2D
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], marker="o", color="gray", linestyle="", markersize=8),
                Line2D([], [], marker="s", markerfacecolor="none", markeredgecolor="gray", linestyle="", markersize=9)]
    labels += ["submission (filled)", "reference (hollow)"]
    ax.legend(handles, labels, loc="lower right", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def speedups(plt, rows_by_task, path):
    panels = [(t, [r for r in rows if r["baselines_ms"]]) for t, rows in sorted(rows_by_task.items())]
    panels = [(t, rows) for t, rows in panels if rows]  # shapes with a baseline (Task 2: its GEMMs, against cuBLAS)
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5.2), dpi=110, squeeze=False)
    colors = plt.get_cmap("tab10").colors
    for ax, (task, rows) in zip(axes[0], panels):
        names = sorted({b for r in rows for b in r["baselines_ms"]})
        width = 0.8 / max(1, len(names))
        values = []
        for j, b in enumerate(names):
            xs, ys = [], []
            for i, r in enumerate(rows):
                if b in r["baselines_ms"]:
                    xs.append(i + (j - (len(names) - 1) / 2) * width)
                    ys.append(r["baselines_ms"][b] / r["ms"])
            values += ys
            bars = ax.bar(xs, ys, width=width * 0.95, color=colors[j % len(colors)], label=f"vs {b}")
            for rect, v in zip(bars, ys):
                ax.annotate(f"{v:.2f}×" if v < 100 else f"{v:.0f}×", xy=(rect.get_x() + rect.get_width() / 2, v),
                            xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=8)
        ax.axhline(1, color="black", linewidth=1)
        if values and max(values) / max(min(values), 1e-9) > 20:
            ax.set_yscale("log")
        top = max(values) if values else 1
        ax.set_ylim(top=max(top, 1.0) * (3 if ax.get_yscale() == "log" else 1.18))  # the line at 1 always shows
        if len(rows) == 1:  # one bar: keep it as narrow as the others panels' bars
            ax.set_xlim(-2, 2)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([short(r["name"]).replace(" causal", "\ncausal").replace(" M=", "\nM=") for r in rows], fontsize=8)
        ax.set_ylabel("speedup: baseline time / submission's time")
        titles = {2: "your GEMMs against cuBLAS", 6: "a decode step, KV cache vs recompute"}
        ax.set_title(f"Task {task}: " + titles.get(task, "the course's speedups"), fontsize=11)
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(True, axis="y", alpha=0.25)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def write_section(md_path, body):
    text = open(md_path, encoding="utf-8").read() if os.path.exists(md_path) else ""
    if SECTION in text:  # replace the section of an earlier run (it is the last one)
        text = text[:text.index(SECTION)]
    text = text.rstrip("\n") + "\n\n" + SECTION + "\n\n" + body.rstrip("\n") + "\n"
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    if len(argv) != 2:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = argv[1]
    res_path, md_path = os.path.join(out, "results.json"), os.path.join(out, "Results.md")
    if not os.path.exists(res_path):
        print(f"plot_results: no {res_path}", file=sys.stderr)
        return 1
    with open(res_path, encoding="utf-8") as f:
        results = json.load(f)
    md = open(md_path, encoding="utf-8").read() if os.path.exists(md_path) else ""
    rows = {t: r for t, r in perf_rows(results).items() if t in TASKS}
    steps = decode_step_rows(results)
    if not rows and not steps:
        write_section(md_path, "No timed shapes in this run (no GPU, or speed not measured): no pictures.")
        print("plot_results: no timed shapes: no pictures")
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        write_section(md_path, "No pictures: matplotlib is not installed (Debian's python3-matplotlib; `make deps` installs it).")
        print("plot_results: matplotlib is not installed: no pictures (a note in Results.md)")
        return 0
    ceil = ceilings(results, md)
    lines, made = [], []
    for task in TASKS:
        if task not in rows:
            continue
        if task not in ceil:
            lines.append(f"Task {task}: no roofline — the run's ceilings are in neither results.json nor Results.md.")
            continue
        name = f"roofline_task{task}.png"
        if roofline(plt, task, rows[task], ceil[task], os.path.join(out, name)):
            lines.append(f"![Task {task}: roofline]({name})\n\nTask {task}: the roofline of the ceilings measured in this run "
                         "(filled: the submission; hollow: the reference; one colour per timed shape).")
            made.append(name)
    if speedups(plt, {**rows, **({6: steps} if steps else {})}, os.path.join(out, "speedups.png")):
        lines.append("![The course's speedups](speedups.png)\n\nEach timed shape's baseline time over the submission's "
                     "(above 1: the submission is faster); Task 6: a decode step with the KV cache against one that "
                     "recomputes every position.")
        made.append("speedups.png")
    write_section(md_path, "\n\n".join(lines) if lines else "No pictures: nothing to plot.")
    print(f"plot_results: wrote {', '.join(made) if made else 'no pictures'} in {out}; Results.md: {SECTION}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
