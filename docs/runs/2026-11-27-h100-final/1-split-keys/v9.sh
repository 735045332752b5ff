#!/usr/bin/env bash
# split keys: S1 (each warpgroup its own dQ over its 64 keys, no cross barrier), S2 (S1 + wg1 starts half a tile late)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
mkdir -p build && tar -C build -xJf carry/var.tar.xz
for v in B0 S1 S2 B0 S1 S2; do echo "== $v" >> "$OUT/var.log"; timeout 100 build/var/$v --shape=1,32,16384,64 --shape=4,32,4096,64 --shape=4,16,4096,128 --shape=1,16,16384,128 2>&1 | grep -E "B=|rror" >> "$OUT/var.log"; done
python3 - "$OUT/var.log" <<'PY'
import sys,re,collections
cur=None; res=collections.defaultdict(list); order=[]
for l in open(sys.argv[1]):
    if l.startswith('== '): cur=l.split()[1]; order.append(cur) if cur not in order else None; continue
    m=re.search(r'(B=\d+ H=\d+ S=\d+ D=\d+( causal)?)',l); t=re.search(r'([0-9.]+) TFLOP/s',l)
    if m and t: res[(m.group(1),cur)].append(float(t.group(1)))
shapes=[]; [shapes.append(s) for s,_ in res if s not in shapes]
for s in shapes: print(f"{s:32}", '  '.join(f"{v} {'/'.join(str(x) for x in res[(s,v)])}" for v in order if res[(s,v)]))
PY
for v in S1 S2; do echo "== ragged $v"; timeout 60 build/var/$v --shape=2,2,1000,64 --shape=2,2,1000,128 --shape=3,2,129,64 --shape=1,1,1,128 --shape=2,3,4100,64 --shape=1,1,127,128 --shape=70,1000,2,64 --shape=1,2,4100,128 2>&1 | grep "B=" ; done
