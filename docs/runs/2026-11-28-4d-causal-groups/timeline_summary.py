"""Summarise the block timelines of bwd_timeline_order_diag.patch (DIAG_TL): for each number of query tiles a block
walked, the median wait for K and V, walk and end; the SMs' busy time against the kernel's span; the last 5 % of
blocks' ends.  Usage: /usr/bin/python3 timeline_summary.py tl_base.txt.causal …
Each line of a timeline: block, start, K and V in, walk done, stores done (ns, %globaltimer), SM, tiles, key block."""
import collections
import statistics as st
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        header = f.readline().strip()
        rows = [list(map(int, line.split()[1:])) for line in f if not line.startswith("#")]
    blocks = [r for r in rows if r[0] > 0]
    start, end = min(r[0] for r in blocks), max(r[3] for r in blocks)
    print(path.split("/")[-1], header, "blocks", len(blocks), "span us", (end - start) / 1e3)
    by_tiles = collections.defaultdict(list)
    for r in blocks:
        by_tiles[r[5]].append(r)
    for n in sorted(by_tiles):
        b = by_tiles[n]
        med = lambda f: st.median(f(r) / 1e3 for r in b)
        walk = med(lambda r: r[2] - r[1])
        print(f"  tiles {n}: {len(b)} blocks  prologue {med(lambda r: r[1] - r[0]):.2f}  loop {walk:.2f} ({walk / n:.2f}/tile)"
              f"  epilogue {med(lambda r: r[3] - r[2]):.2f}  total {med(lambda r: r[3] - r[0]):.2f}")
    busy = collections.defaultdict(float)
    for r in blocks:
        busy[r[4]] += (r[3] - r[0]) / 1e3
    v = sorted(busy.values())
    print("  SM busy us min/med/max", round(v[0], 1), round(st.median(v), 1), round(v[-1], 1), "of span", round((end - start) / 1e3, 1))
    ends = sorted(r[3] for r in blocks)
    print("  last 5% of blocks end after", round((ends[-1] - ends[int(len(ends) * 0.95)]) / 1e3, 1))
