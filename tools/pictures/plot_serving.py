#!/usr/bin/env python3
"""The picture of Task 6b's serving benchmark: the same trace served with pages promised per request (paged) and with
max_seq positions promised to every sequence (a cache reserved per sequence), with the same pool of KV-cache memory.

    tools/pictures/plot_serving.py DIR        (after: bench_task6_serve --csv DIR)

Reads DIR/serve_steps_paged.csv and DIR/serve_steps_max_seq.csv (one row per engine step: running, prefills,
pages_in_use, pages_promised, tokens_in_cache, end_ms, pool_pages, page_size) and writes DIR/serving.png: over time,
the sequences decoding together; the pages in use and the pages the admissions promised, under the pool's size.
Without matplotlib: says so, exit 0.
"""
import csv
import os
import sys


def read(path):
    with open(path) as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    runs = {}
    for way, label in (("paged", "paged: pages promised per request"), ("max_seq", "reserved at max_seq per sequence")):
        path = os.path.join(out, f"serve_steps_{way}.csv")
        if not os.path.exists(path):
            sys.exit(f"plot_serving: {path} is missing (run bench_task6_serve --csv {out})")
        runs[label] = read(path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_serving: no matplotlib here; the CSVs are in", out)
        return
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for (label, rows), color in zip(runs.items(), ("tab:blue", "tab:orange")):
        t = [r["end_ms"] / 1e3 for r in rows]
        top.plot(t, [r["running"] for r in rows], color=color, label=label)
        short = label.split(":")[0]
        bottom.plot(t, [r["pages_in_use"] for r in rows], color=color, label=f"pages in use ({short})")
        bottom.plot(t, [r["pages_promised"] for r in rows], color=color, linestyle=":", linewidth=1.2,
                    label=f"pages promised ({short})")
        top.axvline(t[-1], color=color, linewidth=0.8, linestyle="--")
    pool = next(iter(runs.values()))[0]
    bottom.axhline(pool["pool_pages"], color="grey", linewidth=1, label="the pool")
    top.set_ylabel("sequences decoding together")
    top.set_title("One trace, the same KV-cache memory: who may start decides the batch")
    top.legend(loc="upper right")
    bottom.set_ylabel(f"pages ({int(pool['page_size'])} positions each)")
    bottom.set_xlabel("seconds since the trace began (dashed: the run's end)")
    bottom.legend(loc="center right", fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "serving.png")
    fig.savefig(path, dpi=110)
    print("plot_serving: wrote", path)


if __name__ == "__main__":
    main()
