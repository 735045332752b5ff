#!/usr/bin/env bash
# call 1: is 4d's persistent kernel slower on long walks because its tile loop is longer code (the instruction cache)?
# Builds (carry/x.tar.xz, bench_task4_bf16_backward linked with a changed flash_attention_bf16_backward_sm90.cu; the
# environment's DIAG_PERSIST_MAX_SQ says up to how many rows the persistent kernel runs, default 1,024):
#   bwd_old     HEAD's kernels (persistent tile loop 1,212 SASS instructions from its start to its branch back, 811 not)
#   bwd_new     the persistent kernel's thread-0 code made smaller (32-bit key-block numbers, one row-load site): 998
#   bwd_new_4c  bwd_new, and 4 row loads' worth of code that never runs put into the non-persistent loop: 980
#   bwd_new_8c  the same with 8: 1,144
# Configurations: oldN / oldP (bwd_old, not persistent anywhere / persistent everywhere at D = 64), newP, c4N, c8N.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
rm -rf /tmp/x && tar -C /tmp -xJf carry/x.tar.xz; E=/tmp/x
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
R="--shape=1,3,1,64 --shape=2,3,129,64 --shape=3,1,4100,64 --shape=3,1,160,64 --shape=1,3,383,64 --shape=40,4,300,64 --shape=3,7,640,64 --shape=16,8,777,64 --shape=5,9,1024,64 --shape=2,5,2048,64 --shape=1,2,1000,128"
DIAG_PERSIST_MAX_SQ=1000000 timeout -s KILL 90 $E/bwd_new $R > "$OUT/logs/newP_ragged.log" 2>&1
echo "newP ragged rc=$? $(grep -c ' ok$' "$OUT/logs/newP_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/newP_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
timeout -s KILL 90 $E/bwd_new $R > "$OUT/logs/new_ragged.log" 2>&1
echo "new ragged rc=$? $(grep -c ' ok$' "$OUT/logs/new_ragged.log") ok, $(grep -c MISMATCH "$OUT/logs/new_ragged.log") mismatch" | tee -a "$OUT/summary.txt"
run() {  # name binary env shape round
  DIAG_PERSIST_MAX_SQ=$3 timeout -s KILL 40 $E/bwd_$2 --shape=$4 > "$OUT/logs/$1_$6_r$5.log" 2>&1 || echo "$1 $4 r$5 rc=$?" | tee -a "$OUT/summary.txt"
}
for r in 1 2 3; do
  for sh in 4,32,4096,64 16,32,1024,64; do tag=${sh//,/x}
    run oldN old 0 $sh $r $tag; run oldP old 1000000 $sh $r $tag; run newP new 1000000 $sh $r $tag
    run c4N new_4c 0 $sh $r $tag; run c8N new_8c 0 $sh $r $tag
  done
done
for sh in 4x32x4096x64 16x32x1024x64; do
  mkdir -p /tmp/cmp_$sh; for f in "$OUT"/logs/*_${sh}_r*.log; do b=$(basename $f); cp $f /tmp/cmp_$sh/${b/_${sh}/}; done
  echo "== $sh" | tee -a "$OUT/summary.txt"
  python3 docs/runs/2026-11-28-pv-wait/compare_rounds.py /tmp/cmp_$sh oldN oldP newP c4N c8N | tee -a "$OUT/summary.txt"
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for c in "oldN old 0" "oldP old 1000000" "newP new 1000000" "c8N new_8c 0"; do set -- $c
  DIAG_PERSIST_MAX_SQ=$3 timeout 100 $NCU --section WarpStateStats --section InstructionStats -k regex:key_tile --launch-skip 3 --launch-count 1 \
    -o /tmp/ncu_$1 $E/bwd_$2 --shape=4,32,4096,64 > "$OUT/logs/ncu_$1.log" 2>&1; echo "ncu $1 exit $?" | tee -a "$OUT/summary.txt"
  $NCU -i /tmp/ncu_$1.ncu-rep --page raw --csv > "$OUT/ncu_$1_raw.csv" 2>&1
  $NCU -i /tmp/ncu_$1.ncu-rep --page details > "$OUT/ncu_$1_details.txt" 2>&1
done
python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import csv, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/ncu_*_raw.csv')):
    rows = list(csv.reader(open(f)))
    if len(rows) < 3: print(os.path.basename(f), 'no data'); continue
    h, v = rows[0], rows[2]
    want = [i for i, n in enumerate(h) if ('issue_stalled' in n and n.endswith('.ratio')) or n in ('gpu__time_duration.sum', 'smsp__inst_executed.sum')]
    vals = {h[i]: v[i] for i in want}
    num = lambda x: float(x.replace(',', '')) if x.replace(',', '').replace('.', '', 1).isdigit() else 0.0
    top = sorted(((num(x), k) for k, x in vals.items() if 'stalled' in k), reverse=True)[:12]
    print(os.path.basename(f), vals.get('gpu__time_duration.sum'), vals.get('smsp__inst_executed.sum'))
    for x, k in top: print('   %-90s %s' % (k, x))
PY
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs
