# Summarise decode_kernel block records (block, smid, t0, t1, t2 in ns) per call: calls are split where a block starts
# after every earlier block has ended (kernels on one stream do not overlap).
import sys, statistics as st
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
rows.sort(key=lambda r: r[2])
calls, cur, end = [], [], 0
for r in rows:
    if cur and r[2] > end:
        calls.append(cur); cur = []
    cur.append(r); end = max(end, r[4]) if cur[:-1] else r[4]
if cur: calls.append(cur)
print(f"{sys.argv[1]}: {len(rows)} records, {len(calls)} calls; blocks a call: {sorted(set(len(c) for c in calls))}")
spans = []
for c in calls:
    t0 = min(r[2] for r in c); span = max(r[4] for r in c) - t0
    spans.append((span, c))
spans.sort(key=lambda x: x[0])
print("call spans (us): " + " ".join(f"{s/1000:.1f}" for s, _ in spans))
span, c = spans[len(spans) // 2]
t0 = min(r[2] for r in c)
def pct(xs, ps=(0, 10, 50, 90, 100)):
    xs = sorted(xs); return " ".join(f"p{p}={xs[min(len(xs)-1, int(p/100*(len(xs)-1)+0.5))]/1000:.1f}" for p in ps)
print(f"median call, span {span/1000:.1f} us, {len(c)} blocks on {len(set(r[1] for r in c))} SMs")
print("  block start after call start: " + pct([r[2]-t0 for r in c]))
print("  block end (before merge):     " + pct([r[3]-t0 for r in c]))
print("  block end (after merge):      " + pct([r[4]-t0 for r in c]))
print("  block duration to merge:      " + pct([r[3]-r[2] for r in c]))
print("  merge time:                   " + pct([r[4]-r[3] for r in c]))
per_sm = {}
for r in c: per_sm.setdefault(r[1], []).append(r)
print("  blocks an SM: " + str(sorted(set(len(v) for v in per_sm.values()))))
# the latest-ending 8 blocks
late = sorted(c, key=lambda r: -r[4])[:8]
print("  latest blocks (block sm start end-before-merge end): " + "; ".join(f"{r[0]} {r[1]} {(r[2]-t0)/1000:.1f} {(r[3]-t0)/1000:.1f} {(r[4]-t0)/1000:.1f}" for r in late))
