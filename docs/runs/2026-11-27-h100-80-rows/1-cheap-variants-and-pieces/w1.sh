#!/usr/bin/env bash
# (1) 5b's split forced (DIAG_PIECES) against the plan; (2) 4d backward variants: late = load_rows after dK's commit,
# early = lse terms into registers before the Sᵀ wait, both; three rounds, order rotating; then ragged checks
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
bash carry/s/dp.sh
tar -C /tmp -xJf carry/w.tar.xz
vs=(base late early both)
for r in 0 1 2; do for i in 0 1 2 3; do v=${vs[$(((r + i) % 4))]}
  echo "== $v" >> "$OUT/var.log"; s=$(date +%s)
  timeout 150 /tmp/v/$v 2>&1 | grep -E "B=|rror" >> "$OUT/var.log"; echo "$v r$r $(( $(date +%s) - s )) s" >> "$OUT/times.txt"
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
for v in late early both; do echo "== ragged $v"; timeout 60 /tmp/v/$v --shape=2,2,1000,64 --shape=2,2,1000,128 --shape=3,2,129,64 --shape=1,1,1,128 --shape=2,3,4100,64 --shape=1,1,127,128 --shape=1,2,4100,128 2>&1 | grep -E "B=|rror|FAIL|max" ; done > "$OUT/ragged.log" 2>&1
