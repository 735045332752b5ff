#!/usr/bin/env bash
# 5b: a queue of pieces a KV head, persistent blocks (q, 2/4/8 pieces a block) against the build before (old); full bf16 benchmark in turn
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar -C /tmp -xJf carry/s5.tar.xz
run() {  # label, bin, env...
  local label=$1 bin=$2; shift 2
  echo "== $label" >> "$OUT/var.log"
  env "$@" timeout 120 /tmp/v5/bench_$bin > "/tmp/b/${label}_$r.log" 2>&1; echo "rc=$?" >> "$OUT/var.log"
  grep -E "^B=" "/tmp/b/${label}_$r.log" | head -15 >> "$OUT/var.log"
}
V=("old old X=1" "q2 q ATTNLAB_PIECES_PER_BLOCK=2" "q4 q ATTNLAB_PIECES_PER_BLOCK=4" "q8 q ATTNLAB_PIECES_PER_BLOCK=8")
for r in 0 1 2; do for i in 0 1 2 3; do run ${V[$(((r + i) % 4))]}; done; done
python3 - "$OUT/var.log" <<'PY' | tee "$OUT/var_table.txt"
import sys,re,collections,statistics
cur=None; res=collections.defaultdict(list); order=[]
for l in open(sys.argv[1]):
    if l.startswith('== '): cur=l[3:].strip(); order.append(cur) if cur not in order else None; continue
    m=re.match(r'(B=\S+ H_q=\d+ H_kv=\d+ L=\S+(?: \(\w+\))?)\s+(pages of 64|contiguous|compact pool)\s+([0-9.]+) ms.*?=\s+([0-9.]+)% of a copy.*worst error ([0-9.]+)',l)
    if m: res[(m.group(1)+' '+m.group(2),cur)].append((float(m.group(3)),float(m.group(4)),float(m.group(5))))
shapes=[]; [shapes.append(s) for s,_ in res if s not in shapes]
order=sorted(order)
print(' '*50+'  '.join(f'{v:>30}' for v in order))
worst=0
for s in shapes:
    cells=[]
    for v in order:
        x=res[(s,v)]; worst=max([worst]+[e for _,_,e in x])
        cells.append(f"{statistics.median([a for a,_,_ in x]):.3f} {statistics.median([b for _,b,_ in x]):5.1f}% ({'/'.join(f'{a:.3f}' for a,_,_ in x)})" if x else '-')
    print(f"{s[:50]:50}", '  '.join(f'{c:>30}' for c in cells))
print('worst error / tolerance over all runs:', worst)
PY
grep -c "rc=0" "$OUT/var.log"; grep "rc=[1-9]" "$OUT/var.log" | head
tar -C /tmp -cJf "$OUT/logs.tar.xz" b
