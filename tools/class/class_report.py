#!/usr/bin/env python3
"""The class at a glance: an instructor's report, each student's own page, and the history of gradings.

    tools/class/class_report.py --out OUT [--history FILE] [--no-append]

(`batch_grade.py` runs it after writing OUT/gradebook.csv, and `--collect` after merging a Slurm array's rows.)

Reads OUT/gradebook.csv and each graded student's OUT/<student>/results.json (the grader's: every case, and per
timed shape its time, the reference's, TFLOP/s, GB/s and the baselines). Appends one record per student to the
history (OUT/history.jsonl unless --history; --no-append reads it only), then writes, self-contained (styles and
pictures inline, no network):
  OUT/report/index.html            for the instructor: flagged and refused rows first (nobody ranks on them), points
                                   per task and in total (a histogram each), the failures most of the class shares
                                   (the same case and diagnosis), a leaderboard per timed shape (each correct
                                   submission's time, TFLOP/s, GB/s and ratio beside the reference's and the
                                   baselines'), the GPU and date, and a link to each student's page
  OUT/report/students/<s>.html     one student's own: their points against the class median, their speed rows
                                   against the reference, their history (a small plot per task); no other student's
                                   name or number
A student whose speed on a task jumps — faster than the reference by more than a fifth, after a previous grading at
more than twice its time — gets a "speed jump" flag in the history and on both pages, for review. Every string from a
submission (names, flags, failure reasons) is HTML-escaped.
"""
import argparse
import csv
import datetime
import html
import json
import math
import os
import re
import statistics

JUMP_FROM, JUMP_TO = 2.0, 0.8  # a speed jump: from more than 2× the reference's time to under 0.8× of it


def esc(x):
    return html.escape(str(x), quote=True)


# ---- what a grading produced ---------------------------------------------------------------------

def task_columns(rows):
    cols = sorted({k for r in rows for k in r if re.fullmatch(r"task\d+", k)}, key=lambda k: int(k[4:]))
    return cols + (["bonus"] if any("bonus" in r for r in rows) else [])


def load_results(out, student):
    try:
        with open(os.path.join(out, student, "results.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def speed_rows(res):
    """[{task, shape, ms, ref_ms, tflops, gbps, baselines, credited}] of a results.json's timed shapes."""
    rows = []
    for t in (res or {}).get("tests", []):
        x = t.get("extra_data", {})
        if x.get("state") != "performance" or x.get("ms", -1) <= 0:
            continue
        rows.append({"task": str(x.get("task")) + ("b" if x.get("bonus") else ""),
                     "shape": re.sub(r"^Task \d+\w*: performance ", "", t.get("name", "")),
                     "ms": x["ms"], "ref_ms": x.get("reference_ms", -1), "tflops": x.get("tflops", 0),
                     "gbps": x.get("gbps", 0), "baselines": x.get("baselines_ms", {}),
                     "flag": x.get("reason", "") if x.get("failed_calls") else ""})
    return rows


def failures(res):
    """(case, diagnosis) of each failed case: the reason's diagnosis where it has one, else its words without numbers."""
    out = []
    for t in (res or {}).get("tests", []):
        x = t.get("extra_data", {})
        if x.get("state") not in ("failed", "error", "crashed", "timeout") and t.get("status") != "failed":
            continue
        reason = x.get("reason", "") or t.get("output", "")
        m = re.search(r"diagnosis: (.*?)(?: —|$)", reason)
        what = m.group(1) if m else re.sub(r"[-+]?\d[\d.e+-]*", "#", reason)[:160]
        out.append((t.get("name", ""), what.strip()))
    return out


def mean_ratio(rows, task):
    """The geometric mean of time / the reference's over a task's timed shapes, or None."""
    r = [x["ms"] / x["ref_ms"] for x in rows if x["task"] == task and x["ref_ms"] > 0]
    return math.exp(sum(map(math.log, r)) / len(r)) if r else None


# ---- the history ---------------------------------------------------------------------------------

def read_history(path):
    hist = []
    if os.path.exists(path):
        with open(path) as f:
            hist = [json.loads(line) for line in f if line.strip()]
    return hist


def append_history(path, rows, results, when):
    """One record per student of this grading; a speed jump against their previous record is flagged in it."""
    last = {}
    for h in read_history(path):
        last[h["student"]] = h
    records = []
    for r in rows:
        sp = speed_rows(results.get(r["student"]))
        rec = {"when": when, "student": r["student"], "total": float(r.get("total") or 0),
               "points": {c: float(r.get(c) or 0) for c in task_columns([r])},
               "ratio": {t: mean_ratio(sp, t) for t in sorted({x["task"] for x in sp})},
               "flags": r.get("flags", ""), "gpu": r.get("gpu", ""), "jumps": []}
        prev = last.get(r["student"], {}).get("ratio", {})
        for t, now in rec["ratio"].items():
            before = prev.get(t)
            if now is not None and before is not None and before > JUMP_FROM and now < JUMP_TO:
                rec["jumps"].append(f"speed jump on Task {t}: {before:.2f}× the reference's time at the previous grading, "
                                    f"{now:.2f}× now — review it")
        records.append(rec)
    with open(path, "a") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
    return records


# ---- pictures (inline SVG) -----------------------------------------------------------------------

def histogram_svg(values, top, title, width=320, height=120, bins=10):
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int(bins * v / top)) if top > 0 else 0] += 1
    peak = max(counts) or 1
    bw = (width - 40) / bins
    bars = "".join(f'<rect x="{30 + i * bw:.1f}" y="{height - 20 - (height - 40) * c / peak:.1f}" width="{bw - 2:.1f}" '
                   f'height="{(height - 40) * c / peak:.1f}" fill="#4a78c2"><title>{c} of {len(values)}: '
                   f'{top * i / bins:.2g}–{top * (i + 1) / bins:.2g}</title></rect>' for i, c in enumerate(counts))
    return (f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{esc(title)}"><text x="4" y="12" font-size="11">{esc(title)}</text>{bars}'
            f'<text x="30" y="{height - 4}" font-size="10">0</text><text x="{width - 30}" y="{height - 4}" font-size="10">'
            f'{top:g}</text><text x="2" y="{height / 2:.0f}" font-size="10">{peak}</text></svg>')


def line_svg(points, title, width=260, height=90, ref=None):
    """A small plot of (label, value) points in order; `ref` a dashed line (the reference's 1.0, or a maximum)."""
    vals = [v for _, v in points if v is not None]
    if not vals:
        return ""
    hi = max(vals + ([ref] if ref else [])) * 1.1 or 1.0
    xs = [30 + (width - 40) * i / max(1, len(points) - 1) for i in range(len(points))]
    ys = [None if v is None else height - 18 - (height - 34) * v / hi for _, v in points]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys) if y is not None)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#c2564a"><title>{esc(lab)}: {v:.3g}</title></circle>'
                   for x, y, (lab, v) in zip(xs, ys, points) if y is not None)
    line = (f'<line x1="30" x2="{width - 10}" y1="{height - 18 - (height - 34) * ref / hi:.1f}" '
            f'y2="{height - 18 - (height - 34) * ref / hi:.1f}" stroke="#888" stroke-dasharray="4 3"/>' if ref else "")
    return (f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{esc(title)}"><text x="4" y="12" font-size="11">{esc(title)}</text>{line}'
            f'<polyline points="{path}" fill="none" stroke="#c2564a"/>{dots}</svg>')


# ---- pages ---------------------------------------------------------------------------------------

STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em;max-width:100%}th,td{border:1px solid #ccc;padding:.2em .5em;
text-align:right;overflow-wrap:break-word;vertical-align:top}th{background:#eef;white-space:nowrap}
td.text,th.text{text-align:left}td.text{max-width:40em}
.flag{color:#a33}.muted{color:#777}svg.chart{margin:.3em 1em .3em 0;vertical-align:top}section{margin-bottom:1.5em}
.charts{display:flex;flex-wrap:wrap}"""


def page(title, body):
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width,initial-scale=1"><title>{esc(title)}</title><style>{STYLE}</style></head>'
            f'<body><h1>{esc(title)}</h1>{body}</body></html>\n')


def table(head, rows, text_cols=(0,), cls=""):
    th = "".join(f'<th class="{"text" if i in text_cols else ""}">{esc(h)}</th>' for i, h in enumerate(head))
    trs = "".join("<tr>" + "".join(f'<td class="{"text" if i in text_cols else ""}">{c}</td>' for i, c in enumerate(r))
                  + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>'


def fmt(x, spec=".2f"):
    return "" if x is None else format(x, spec)


def leaderboards(rows, results, who=None):
    """Per timed shape: each correct submission's time (or `who`'s alone), the reference's and the baselines'."""
    by_shape = {}
    for r in rows:
        for x in speed_rows(results.get(r["student"])):
            by_shape.setdefault((x["task"], x["shape"]), []).append((r["student"], x))
    html_out = ""
    for (task, shape), entries in sorted(by_shape.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ref = statistics.median(x["ref_ms"] for _, x in entries if x["ref_ms"] > 0) if any(
            x["ref_ms"] > 0 for _, x in entries) else None
        lines = []
        for rank, (student, x) in enumerate(sorted(entries, key=lambda e: e[1]["ms"]), 1):
            if who is not None and student != who:
                continue
            ratio = x["ms"] / x["ref_ms"] if x["ref_ms"] > 0 else None
            lines.append([str(rank) if who is None else f"{rank} of {len(entries)}", esc(student), fmt(x["ms"], ".3f"),
                          fmt(x["tflops"], ".1f"), fmt(x["gbps"], ".0f"), fmt(ratio),
                          f'<span class="flag">{esc(x["flag"])}</span>'])
        if ref:
            lines.append(["", '<span class="muted">the reference (median of its times)</span>', fmt(ref, ".3f"), "", "",
                          "1.00", ""])
        for name, ms in sorted(entries[0][1]["baselines"].items()):
            lines.append(["", f'<span class="muted">{esc(name)}</span>', fmt(ms, ".3f"), "", "",
                          fmt(ms / ref if ref else None), ""])
        html_out += (f"<h3>Task {esc(task)}: {esc(shape)}</h3>" +
                     table(["rank", "who", "ms", "TFLOP/s", "GB/s", "time / reference's", "flag"], lines, (1, 6)))
    return html_out


def class_page(rows, results, history, meta):
    cols = task_columns(rows)
    flagged = [r for r in rows if r.get("flags")]
    jumps = {h["student"]: h["jumps"] for h in history if h.get("jumps") and h["when"] == meta["when"]}
    body = (f'<p>Graded {esc(meta["when"])}; GPU: {esc(meta["gpu"] or "none")}; {len(rows)} submissions. '
            f'Each name links to that student\'s own page.</p>')
    body += "<section><h2>Flagged and refused (not ranked)</h2>"
    fl = [[f'<a href="students/{esc(r["student"])}.html">{esc(r["student"])}</a>', esc(r.get("total", "")),
           f'<span class="flag">{esc(r["flags"])}</span>'] for r in flagged]
    fl += [[f'<a href="students/{esc(s)}.html">{esc(s)}</a>', "", f'<span class="flag">{esc("; ".join(j))}</span>']
           for s, j in sorted(jumps.items())]
    body += (table(["student", "total", "why"], fl, (0, 2)) if fl else "<p>None.</p>") + "</section>"
    body += "<section><h2>Points</h2><div class=\"charts\">"
    maxes = meta["max_points"]
    for c in cols + ["total"]:
        vals = [float(r.get(c) or 0) for r in rows]
        body += histogram_svg(vals, maxes.get(c, max(vals + [1])), f"{c}: median {statistics.median(vals):.2f}")
    body += "</div>"
    body += table(["student"] + cols + ["total", "GPU"],
                  [[f'<a href="students/{esc(r["student"])}.html">{esc(r["student"])}</a>'] +
                   [esc(r.get(c, "0.0")) for c in cols + ["total"]] + [esc(r.get("gpu", ""))]
                   for r in sorted(rows, key=lambda r: r["student"])], (0, len(cols) + 2), cls="points") + "</section>"
    shared = {}
    for r in rows:
        for key in set(failures(results.get(r["student"]))):
            shared.setdefault(key, []).append(r["student"])
    common = sorted(((len(v), k) for k, v in shared.items() if len(v) >= 2), reverse=True)[:15]
    body += "<section><h2>Failures the class shares</h2>"
    body += (table(["students", "case", "what went wrong"], [[str(n), esc(k[0]), esc(k[1])] for n, k in common], (1, 2))
             if common else "<p>No failure is shared by two students or more.</p>") + "</section>"
    board = leaderboards([r for r in rows if not r.get("flags")], results)
    body += "<section><h2>Speed, per timed shape (correct, unflagged submissions)</h2>" + (board or "<p>Nothing timed.</p>")
    return page(f"{meta['course']}: the class", body + "</section>")


def student_page(r, rows, results, history, meta):
    s = r["student"]
    cols = task_columns(rows)
    med = {c: statistics.median(float(x.get(c) or 0) for x in rows) for c in cols + ["total"]}
    body = f'<p>Graded {esc(meta["when"])}; GPU: {esc(r.get("gpu") or meta["gpu"] or "none")}.</p>'
    mine = [h for h in history if h["student"] == s]
    flags = [r["flags"]] if r.get("flags") else []
    flags += [j for h in mine if h["when"] == meta["when"] for j in h.get("jumps", [])]
    if flags:
        body += "<p class=\"flag\">" + "<br>".join(esc(f) for f in flags) + "</p>"
    body += "<section><h2>Points</h2>" + table(
        ["", *cols, "total"], [["yours", *[esc(r.get(c, "0.0")) for c in cols], esc(r.get("total", ""))],
                               ["class median", *[fmt(med[c]) for c in cols], fmt(med["total"])],
                               ["possible", *[fmt(meta["max_points"].get(c)) for c in cols], fmt(meta["max_points"]["total"])]],
        (0,), cls="points") + "</section>"
    sp = leaderboards(rows, results, who=s)
    body += "<section><h2>Your speed, beside the reference</h2>" + (sp or "<p>Nothing of yours was timed.</p>") + "</section>"
    body += "<section><h2>Your history</h2>"
    if mine:
        tasks = sorted({t for h in mine for t in h["ratio"]})
        body += table(["graded", "total", *[f"Task {t}: time / reference's" for t in tasks], "flags"],
                      [[esc(h["when"]), fmt(h["total"]), *[fmt(h["ratio"].get(t)) for t in tasks],
                        esc("; ".join(h.get("jumps", [])) or h.get("flags", ""))] for h in mine], (0, len(tasks) + 2),
                      cls="history")
        body += '<div class="charts">' + line_svg([(h["when"], h["total"]) for h in mine], "total points",
                                                  ref=meta["max_points"]["total"])
        body += "".join(line_svg([(h["when"], h["ratio"].get(t)) for h in mine], f"Task {t}: time / reference's", ref=1.0)
                        for t in tasks) + "</div>"
    body += "</section>"
    return page(f"{meta['course']}: {s}", body)


def write_report(out, history_path=None, append=True, when=None):
    with open(os.path.join(out, "gradebook.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    results = {r["student"]: load_results(out, r["student"]) for r in rows}
    history_path = history_path or os.path.join(out, "history.jsonl")
    when = when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if append:
        append_history(history_path, rows, results, when)
    history = read_history(history_path)
    if not append and history:
        when = history[-1]["when"]
    rubric = json.load(open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                         "grader/rubric.json")))
    maxp = {f"task{t['id']}": t["points"] for t in rubric["tasks"]}
    maxp["bonus"] = sum(b["points"] for b in rubric.get("bonus", []))
    maxp["total"] = sum(maxp[c] for c in task_columns(rows) if c != "bonus") or sum(t["points"] for t in rubric["tasks"])
    gpus = sorted({(res or {}).get("extra_data", {}).get("gpu", "") for res in results.values()} - {""})
    meta = {"when": when, "course": rubric.get("course", "attnlab"), "max_points": maxp, "gpu": ", ".join(gpus)}
    os.makedirs(os.path.join(out, "report", "students"), exist_ok=True)
    with open(os.path.join(out, "report", "index.html"), "w") as f:
        f.write(class_page(rows, results, history, meta))
    for r in rows:
        with open(os.path.join(out, "report", "students", r["student"] + ".html"), "w") as f:
            f.write(student_page(r, rows, results, history, meta))
    print(f"report: {os.path.join(out, 'report', 'index.html')} and {len(rows)} students' pages; history {history_path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the class run's folder (gradebook.csv, <student>/results.json)")
    ap.add_argument("--history", help="the history file (default OUT/history.jsonl)")
    ap.add_argument("--no-append", action="store_true", help="read the history, add nothing to it")
    a = ap.parse_args()
    write_report(a.out, a.history, not a.no_append)


if __name__ == "__main__":
    main()
