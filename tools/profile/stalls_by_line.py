#!/usr/bin/env python3
"""Where a kernel's warps wait, per line of its CUDA source: Nsight Compute's stall samples summed by source line.

    ncu --set full --import-source yes -k regex:NAME --launch-count 1 -o REPORT ./your_binary …   (a -lineinfo build)
    ncu --import REPORT.ncu-rep --page source --csv --print-source cuda,sass > REPORT.csv
    tools/profile/stalls_by_line.py REPORT.csv [--top 25]

One line per source line, largest first: its share of all the warps' stall samples, file:line, the start of the
source text, the stall reasons that hold more than 15 % of its samples, and the SASS opcodes that hold most of them.
A test inside a hot loop that compiles to a branch per element, a fence, a wait: each shows up as one line holding a
large share, where the section pages show only totals.

ncu writes the file as blocks ("File Path", "Function Name", a header row, then for each source line a row with its
number followed by its SASS rows). The source rows are not valid CSV (the source text's quotes are not escaped), so
they are read for their line number alone; the figures come from the SASS rows, which are ("..." rows mark gaps).
"""
import argparse
import collections
import csv
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
SOURCE_ROW = re.compile(r'^"(\d+)","(.*)$')


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None  # "-" on the gap rows


def read(path):
    """{(file, line): {"samples": n, "text": str, "stalls": Counter, "opcodes": Counter}}, and the total of samples."""
    lines = {}
    header, where, total = None, None, 0.0
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if raw.startswith('"File Path"'):
                path_in = next(csv.reader([raw]))[1]
                where = (path_in.rsplit("/", 1)[-1], None)
                continue
            if raw.startswith('"Line No"'):
                header = next(csv.reader([raw]))
                continue
            if header is None or where is None or raw.startswith('"Function Name"'):
                continue
            m = SOURCE_ROW.match(raw)
            if m and not raw.startswith('"",'):
                where = (where[0], int(m.group(1)))
                lines.setdefault(where, {"samples": 0.0, "text": m.group(2).split('","-","-"')[0].strip(),
                                         "stalls": collections.Counter(), "opcodes": collections.Counter()})
                continue
            if not raw.startswith('"",') or where[1] is None:
                continue
            row = dict(zip(header[2:], next(csv.reader([raw]))[2:]))  # header[3] and [1] are both "Source"
            n = number(row.get(SAMPLES, "-"))
            if n is None:
                continue
            entry = lines[where]
            entry["samples"] += n
            total += n
            words = row.get("Source", "").split()
            op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")
            entry["opcodes"][op.split(".")[0]] += n
            for name, value in row.items():
                if name.startswith("stall_") and "(Not Issued)" not in name:
                    v = number(value)
                    if v:
                        entry["stalls"][name[len("stall_"):]] += v
    return lines, total


def report(lines, total, top):
    out = [f"{total:,.0f} stall samples in all"]
    for (file, line), e in sorted(lines.items(), key=lambda kv: -kv[1]["samples"])[:top]:
        if e["samples"] <= 0:
            break
        reasons = ", ".join(f"{k} {v / e['samples'] * 100:.0f}%" for k, v in e["stalls"].most_common() if v > 0.15 * e["samples"])
        ops = ",".join(k for k, _ in e["opcodes"].most_common(3))
        share = e["samples"] / total * 100 if total else 0.0
        out.append(f"{share:5.1f}%  {file}:{line:<5} {e['text'][:60]:60} | {reasons} | {ops}")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source cuda,sass output")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    lines, total = read(args.csv)
    if not lines:
        print(f"stalls_by_line: no source lines in {args.csv} (was it written with --page source --print-source cuda,sass?)",
              file=sys.stderr)
        return 1
    print(report(lines, total, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
