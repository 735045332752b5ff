#!/usr/bin/env bash
# 5b: stretches (new5b, waves 1 and 2) against the build before (old5b), full bf16 benchmark in turn, three rounds
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar -C /tmp -xJf carry/s5.tar.xz
run() {  # label, env...
  local label=$1; shift
  echo "== $label" >> "$OUT/var.log"
  env "$@" timeout 120 /tmp/v5/bench_$label > "$OUT/b_${label}_$r$*.log" 2>&1; echo "rc=$?" >> "$OUT/var.log"
  grep -E "^B=" "$OUT/b_${label}_$r$*.log" | grep -v "f32" | head -15 >> "$OUT/var.log"
}
for r in 0 1 2; do
  case $r in
    0) run old X=1; run new ATTNLAB_WAVES=1; run new ATTNLAB_WAVES=2 ;;
    1) run new ATTNLAB_WAVES=2; run old X=1; run new ATTNLAB_WAVES=1 ;;
    2) run new ATTNLAB_WAVES=1; run new ATTNLAB_WAVES=2; run old X=1 ;;
  esac
done
python3 - "$OUT/var.log" <<'PY' | tee "$OUT/var_table.txt"
import sys,re,collections,statistics
cur=None; res=collections.defaultdict(list); order=[]; lab=None
for l in open(sys.argv[1]):
    if l.startswith('== '): cur=l[3:].strip(); order.append(cur) if cur not in order else None; continue
    m=re.match(r'(B=\S+ H_q=\d+ H_kv=\d+ L=\S+(?: \(\w+\))?)\s+(pages of 64|contiguous|compact pool)\s+([0-9.]+) ms.*?=\s+([0-9.]+)% of a copy',l)
    if m: res[(m.group(1)+' '+m.group(2),cur)].append((float(m.group(3)),float(m.group(4))))
shapes=[]; [shapes.append(s) for s,_ in res if s not in shapes]
print(' '*58+'  '.join(f'{v:>28}' for v in order))
for s in shapes:
    cells=[]
    for v in order:
        x=res[(s,v)]
        cells.append(f"{statistics.median([a for a,_ in x]):.3f} ms {statistics.median([b for _,b in x]):5.1f}% ({'/'.join(f'{a:.3f}' for a,_ in x)})" if x else '-')
    print(f"{s:58}", '  '.join(f'{c:>28}' for c in cells))
PY
grep -h "worst error" "$OUT"/b_new*.log | grep -v "0\.[0-9][0-9] of the tol" | head -5; grep -hci "fail\|error:" "$OUT"/b_*.log | paste -sd' '
