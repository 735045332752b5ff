# The entry point's rule (three_warpgroups_pay) against calls 2 and 3's timings of rungs 10b and 10c (means of the
# passes): prints each shape, both kernels, the pick and the pick's share of the faster. /usr/bin/python3 pick_check.py
import math, re, sys, os
here = os.path.dirname(os.path.abspath(__file__))
sms = 132
def pay(BH, Sq, Sk, causal):
    units = BH * ((Sq + 63) // 64)
    if causal: return Sq >= 2048 and Sk >= 2048 and units >= 15 * sms
    if Sk < 512: return False
    w = lambda c: math.ceil(units / (sms * c)) * 64 * c
    return w(3) / 1.10 < w(2)
d = {}
for f in ['call3/bench_r1.log', 'call3/bench_r2.log', 'call2/bench_skip1_r1.log', 'call2/bench_skip1_r2.log']:
    sh = None
    for line in open(os.path.join(here, f)):
        m = re.match(r'B=(\d+) H=(\d+) S=(\d+) D=64( causal)?', line)
        if m: sh = (int(m[1]) * int(m[2]), int(m[1]), int(m[2]), int(m[3]), bool(m[4])); continue
        m = re.search(r'^\s+(10b|10c) .* ([\d.]+) TFLOP/s =', line)
        if m and sh: d.setdefault(sh, {}).setdefault(m[1], []).append(float(m[2]))
for sh in sorted(d):
    v = d[sh]
    if '10b' not in v or '10c' not in v: continue
    b = sum(v['10b']) / len(v['10b']); c = sum(v['10c']) / len(v['10c'])
    pick = pay(sh[0], sh[3], sh[3], sh[4]); got = c if pick else b
    print(sh[1:], 'causal' if sh[4] else 'full', f'10b {b:.1f} 10c {c:.1f} pick {"10c" if pick else "10b"} {got / max(b, c):.3f}')
