#!/usr/bin/env python3
"""The short summary of `make profile-taskN`: a few Nsight Compute figures a student can act on.

    tools/profile/profile_summary.py --metric-list                      the metrics to collect (ncu --metrics)
    tools/profile/profile_summary.py --task 4 --yours A.csv [--reference B.csv | --reference-note TEXT]

A.csv and B.csv are ncu's raw page as CSV (`ncu --import taskN.ncu-rep --csv --page raw --print-units base`):
a header row of column names (ID, Kernel Name, …, then one column per metric), optionally a row of units,
then one row per profiled kernel. A metric that is not in the file (another ncu version, another GPU)
prints as "n/a"; nothing here fails on a missing column. One block per kernel, in launch order;
with --reference, the reference's kernel of the same position beside yours.
"""
import argparse
import csv
import sys

# (metric, label, kind). kind: "time" (ns in base units), "pct", "count", "bytes", "int".
METRICS = [
    ("gpu__time_duration.sum", "duration", "time"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput, % of peak", "pct"),
    ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory throughput, % of peak", "pct"),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput, % of peak", "pct"),
    ("sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy, %", "pct"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy, %", "pct"),
    ("launch__occupancy_limit_registers", "blocks/SM allowed by registers", "int"),
    ("launch__occupancy_limit_shared_mem", "blocks/SM allowed by shared memory", "int"),
    ("launch__occupancy_limit_warps", "blocks/SM allowed by warps (block size)", "int"),
    ("launch__occupancy_limit_blocks", "blocks/SM allowed by the block limit", "int"),
    ("launch__registers_per_thread", "registers per thread", "int"),
    ("launch__shared_mem_per_block_dynamic", "dynamic shared memory per block", "bytes"),
    ("launch__shared_mem_per_block_static", "static shared memory per block", "bytes"),
    ("launch__block_size", "threads per block", "int"),
    ("launch__grid_size", "blocks in the grid", "int"),
    ("launch__waves_per_multiprocessor", "waves per SM", "float"),
    ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "local-memory loads (spills, local arrays)", "bytes"),
    ("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", "local-memory stores", "bytes"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared-memory bank conflicts, loads", "count"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "shared-memory bank conflicts, stores", "count"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared-memory load wavefronts", "count"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared-memory store wavefronts", "count"),
]
LIMITERS = [("launch__occupancy_limit_registers", "registers"), ("launch__occupancy_limit_shared_mem", "shared memory"),
            ("launch__occupancy_limit_warps", "warps (threads per block)"), ("launch__occupancy_limit_blocks", "blocks per SM")]
# Another name for the same figure where the first is not collected: (metric, multiplier to the first's unit).
FALLBACKS = {
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum": ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 32),
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum": ("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 32),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 1),
}
TIME_UNITS = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}
BYTE_UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
              "Kibyte": 1024, "Mibyte": 1024 ** 2, "Gibyte": 1024 ** 3}


def number(text):
    """A float from a CSV cell ("1,234.5", "12", "n/a", ""); None when it is not a number."""
    t = (text or "").strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def read_kernels(path):
    """[{column: (value text, unit)}] per kernel row of an ncu raw-page CSV."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = [r for r in csv.reader(f) if r and any(c.strip() for c in r)]
    # ncu may print lines of its own (==PROF== …) before the table: the header is the row with "Kernel Name".
    start = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if start is None:
        return []
    header, body = rows[start], rows[start + 1:]
    units = [""] * len(header)
    if body and "ID" in header and number(body[0][header.index("ID")]) is None:
        units, body = body[0], body[1:]  # the units row: no kernel ID
    return [{h: (r[i] if i < len(r) else "", units[i] if i < len(units) else "") for i, h in enumerate(header)} for r in body]


def value(kernel, metric, kind):
    """The metric in base units (ns, bytes, %), or None when absent or not a number."""
    if kernel is None:
        return None
    scale = 1
    if metric not in kernel or number(kernel[metric][0]) is None:
        if metric not in FALLBACKS or FALLBACKS[metric][0] not in kernel:
            return None
        metric, scale = FALLBACKS[metric]
    text, unit = kernel[metric]
    v = number(text)
    if v is None:
        return None
    if kind == "time":
        v *= TIME_UNITS.get(unit.strip(), 1)
    elif kind == "bytes":
        v *= BYTE_UNITS.get(unit.strip(), 1)
    return v * scale


def fmt(v, kind):
    if v is None:
        return "n/a"
    if kind == "time":
        return f"{v / 1e6:.3f} ms" if v >= 1e5 else f"{v / 1e3:.1f} us"
    if kind == "pct":
        return f"{v:.1f} %"
    if kind == "bytes":
        for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if v >= scale:
                return f"{v / scale:.1f} {unit}"
        return f"{v:.0f} B"
    if kind == "float":
        return f"{v:.2f}"
    return f"{v:,.0f}"


def limiter(kernel):
    """'shared memory (1 block/SM)': the resource that allows the fewest blocks per SM; 'n/a' if unknown."""
    limits = [(value(kernel, m, "int"), name) for m, name in LIMITERS]
    known = [(v, name) for v, name in limits if v is not None]
    if not known:
        return "n/a"
    low = min(v for v, _ in known)
    names = " and ".join(name for v, name in known if v == low)
    return f"{names} ({low:.0f} block{'s' if low != 1 else ''}/SM)"


def conflict_share(kernel, op):
    c = value(kernel, f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", "count")
    w = value(kernel, f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", "count")
    return None if c is None or not w else 100.0 * c / w


def hints(k):
    """What the figures suggest, in a line each (docs/profiling.md says more)."""
    out = []
    loc = sum(value(k, m, "bytes") or 0 for m in ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"))
    if loc > 0:
        out.append("local-memory traffic: registers spilled or an array indexed at run time (a template D, unrolled "
                   "loops; `-Xptxas -v` prints the spills)")
    for op, what in (("ld", "loads"), ("st", "stores")):
        share = conflict_share(k, op)
        if share is not None and share > 10:
            out.append(f"shared-memory {what}: {share:.0f} % of wavefronts are bank conflicts (pad rows, e.g. by 4 floats)")
    lim = limiter(k)
    blocks = min((v for v in (value(k, m, "int") for m, _ in LIMITERS) if v is not None), default=None)
    if blocks is not None and blocks <= 1:
        out.append(f"one block per SM, limited by {lim.split(' (')[0]}: while it waits at __syncthreads() nothing else "
                   "runs there")
    sm, mem = value(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "pct"), \
        value(k, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "pct")
    if sm is not None and mem is not None and max(sm, mem) < 40:
        out.append("neither compute nor memory is busy (< 40 % of peak): latency-bound — more work in flight per SM")
    return out


def kernel_name(k):
    name = k.get("Kernel Name", ("?", ""))[0] if k else "—"
    return name if len(name) <= 90 else name[:87] + "…"


def summary(task, yours, reference=None, reference_note=None):
    lines = [f"Task {task}: Nsight Compute summary, {len(yours)} kernel{'s' if len(yours) != 1 else ''} profiled "
             "(in launch order)"]
    if not yours:
        lines.append("  no kernel was profiled: did the driver's profiled call launch one? (see the .log beside the report)")
        return lines
    if reference is None and reference_note:
        lines.append(f"  reference: {reference_note}")
    total = [value(k, "gpu__time_duration.sum", "time") for k in yours]
    for i, k in enumerate(yours):
        r = reference[i] if reference and i < len(reference) else None
        lines.append("")
        lines.append(f"kernel {i + 1}: {kernel_name(k)}  (grid {k.get('Grid Size', ('?', ''))[0]}, "
                     f"block {k.get('Block Size', ('?', ''))[0]})")
        if reference is not None:
            lines.append(f"  reference's kernel {i + 1}: {kernel_name(r) if r else '(none at this position)'}")
        width = max(len(label) for _, label, _ in METRICS) + 2
        head = f"  {'':<{width}} {'yours':>14}" + (f" {'reference':>14}" if reference is not None else "")
        lines.append(head)
        for metric, label, kind in METRICS:
            row = f"  {label:<{width}} {fmt(value(k, metric, kind), kind):>14}"
            if reference is not None:
                row += f" {fmt(value(r, metric, kind), kind):>14}"
            lines.append(row)
        lim = f"  occupancy limited by: {limiter(k)}"
        if reference is not None:
            lim += f"   (reference: {limiter(r) if r else 'n/a'})"
        lines.append(lim)
        for h in hints(k):
            lines.append(f"  -> {h}")
    if len(yours) > 1 and all(t is not None for t in total):
        lines.append("")
        lines.append(f"all {len(yours)} kernels: {fmt(sum(total), 'time')}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metric-list", action="store_true", help="print the metrics to collect, comma-separated")
    ap.add_argument("--task", default="?")
    ap.add_argument("--yours", help="ncu raw-page CSV of your kernels")
    ap.add_argument("--reference", help="ncu raw-page CSV of the reference's kernels")
    ap.add_argument("--reference-note", help="printed when there is no reference to compare with")
    a = ap.parse_args(argv)
    if a.metric_list:
        print(",".join(m for m, _, _ in METRICS))
        return 0
    if not a.yours:
        ap.error("--yours is required")
    yours = read_kernels(a.yours)
    reference = read_kernels(a.reference) if a.reference else None
    print("\n".join(summary(a.task, yours, reference, a.reference_note)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
