#!/usr/bin/env python3
# Medians of the rounds per shape and build, from bench logs DIR/BUILD_rN.log (bench_task4_bf16: the shape on its own
# line; bench_task4_bf16_backward: on the timing line): compare_rounds.py DIR BASE OTHER...
import glob, re, statistics as st, sys

d, builds = sys.argv[1], sys.argv[2:]
res = {}
for b in builds:
    for f in sorted(glob.glob(f'{d}/{b}_r*.log')):
        sh = None
        for l in open(f):
            m = re.search(r'(B=\d+ H=\d+ S=\d+ D=\d+)( causal)?', l)
            if m:
                sh = m.group(1) + (m.group(2) or '')
            v = re.search(r'([\d.]+) TFLOP/s', l)
            if v and sh and ' ok' in l:
                res.setdefault(sh, {}).setdefault(b, []).append(float(v.group(1)))
for sh, v in res.items():
    if builds[0] not in v:
        continue
    base = st.median(v[builds[0]])
    cells = [f'{b} {st.median(v[b]):6.1f} ({min(v[b]):.1f}-{max(v[b]):.1f}) {100 * (st.median(v[b]) / base - 1):+5.1f}%'
             for b in builds if b in v]
    print(f'{sh:30s}', '  '.join(cells))
