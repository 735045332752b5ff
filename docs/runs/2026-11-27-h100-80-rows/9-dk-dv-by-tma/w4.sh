#!/usr/bin/env bash
# 4d backward: dK and dV out through shared memory and the TMA unit (tst, -DBWD_TMA_STORE) against 0e7ae90 (base); ragged checks first
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar -C /tmp -xJf carry/w.tar.xz
timeout 100 /tmp/v/tst --shape=1,1,1,64 --shape=1,1,1,128 --shape=1,1,127,128 --shape=2,3,129,128 --shape=1,2,80,128 --shape=1,2,81,128 --shape=2,2,1000,128 --shape=1,2,4100,128 --shape=3,5,160,128 --shape=2,2,1000,64 > "$OUT/ragged.log" 2>&1; echo "ragged rc=$?" | tee -a "$OUT/ragged.log"
grep -E "B=|rror|rc=" "$OUT/ragged.log" | sed 's/  */ /g' | cut -c1-160
S=""
vs=(base tst)
for r in 0 1 2; do for i in 0 1; do v=${vs[$(((r + i) % 2))]}
  echo "== $v" >> "$OUT/var.log"
  timeout 150 /tmp/v/$v 2>&1 | grep -E "B=|rror" >> "$OUT/var.log"
done; done
python3 - "$OUT/var.log" <<'PY' | tee "$OUT/var_table.txt"
import sys,re,collections,statistics
cur=None; res=collections.defaultdict(list); order=[]
for l in open(sys.argv[1]):
    if l.startswith('== '): cur=l.split()[1]; order.append(cur) if cur not in order else None; continue
    m=re.search(r'(B=\d+ H=\d+ S=\d+ D=\d+( causal)?)',l); t=re.search(r'([0-9.]+) TFLOP/s',l)
    if m and t: res[(m.group(1),cur)].append(float(t.group(1)))
shapes=[]; [shapes.append(s) for s,_ in res if s not in shapes]
for s in shapes: print(f"{s:32}", '  '.join(f"{v} {statistics.median(res[(s,v)]):.1f} ({'/'.join(str(x) for x in res[(s,v)])})" for v in order if res[(s,v)]))
PY
