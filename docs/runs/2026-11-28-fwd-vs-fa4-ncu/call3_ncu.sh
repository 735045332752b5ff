#!/usr/bin/env bash
# call 3 (calls 1 and 2 stashed FA4's wheel halves): ncu --set full on one warm launch of the reference's forward
# (bench_task4_bf16) and of FA4's (fa4_calls.py) at 1·16·16384·128 and 1·32·16384·64, non-causal, and 1·32·16384·64 causal.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl 2>&1 | tail -2
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
$NCU --version | tail -1 | tee -a "$OUT/summary.txt"
i=0
for sh in "1 16 16384 128 0" "1 32 16384 64 0" "1 32 16384 64 1"; do i=$((i+1)); set -- $sh
  # ours: the benchmark times the shape non-causal, then causal; skip into the chosen one's warm launches
  skip=3; [ "$5" = 1 ] && skip=16
  timeout 150 $NCU --set full -k regex:persistent_kernel --launch-skip $skip --launch-count 1 -o /tmp/ours$i \
    build/carry/reference/bench_task4_bf16 --shape=$1,$2,$3,$4 > "$OUT/ours_run$i.log" 2>&1; echo "ours $sh: exit $?" | tee -a "$OUT/summary.txt"
  timeout 150 $NCU --set full -k regex:'(?i)flash|attention' --launch-skip 3 --launch-count 1 -o /tmp/fa4_$i \
    python3 "$HERE/fa4_calls.py" $sh > "$OUT/fa4_run$i.log" 2>&1; echo "fa4 $sh: exit $?" | tee -a "$OUT/summary.txt"
  for w in ours fa4_; do
    $NCU -i /tmp/$w$i.ncu-rep --page details > "$OUT/${w%_}_details$i.txt" 2>&1
    $NCU -i /tmp/$w$i.ncu-rep --page raw --csv > "$OUT/${w%_}_raw$i.csv" 2>&1
  done
done
grep -E "^  [a-zA-Z_]|Duration|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|Registers Per|SM Frequency|Dynamic Shared" $OUT/*_details*.txt | cut -c1-180
xz -9 $OUT/*_raw*.csv
