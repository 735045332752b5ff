#!/usr/bin/env bash
# call 3 (calls 1 and 2 stashed FA4's wheel halves in ~/fa4-stash): ncu --set full on one warm launch of the reference's
# backward key-tile kernel (bench_task4_bf16_backward, binaries from tools/gpu/pack_gpu.sh at eea467c) and of FA4's
# backward main kernel (fa4_bwd_calls.py) at 16·16·1024·128 causal and 4·16·4096·128 non-causal; the source pages (SASS,
# executed instructions and stall samples per instruction) exported as CSV.
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
for sh in "16 16 1024 128 1 64" "4 16 4096 128 0 80"; do i=$((i+1)); set -- $sh
  # ours: the benchmark times the shape non-causal, then causal; the two use different tiles at S = 1,024 (80 / 64 rows)
  skip=3; [ "$5" = 0 ] || skip=3
  timeout 150 $NCU --set full --import-source no --kernel-name-base demangled -k "regex:key_tile_kernel_sm90<\(int\)128, \(int\)$6" \
    --launch-skip $skip --launch-count 1 -o /tmp/ours$i build/carry/reference/bench_task4_bf16_backward --shape=$1,$2,$3,$4 \
    > "$OUT/ours_run$i.log" 2>&1; echo "ours $sh: exit $?" | tee -a "$OUT/summary.txt"
  timeout 200 $NCU --set full --import-source no -k 'regex:FlashAttentionBackwardSm90' --launch-skip 3 --launch-count 1 -o /tmp/fa4_$i \
    python3 "$HERE/fa4_bwd_calls.py" $1 $2 $3 $4 $5 > "$OUT/fa4_run$i.log" 2>&1; echo "fa4 $sh: exit $?" | tee -a "$OUT/summary.txt"
  for w in ours fa4_; do
    $NCU -i /tmp/$w$i.ncu-rep --page details > "$OUT/${w%_}_details$i.txt" 2>&1
    $NCU -i /tmp/$w$i.ncu-rep --page source --csv --print-source sass > "$OUT/${w%_}_sass$i.csv" 2>&1
  done
done
grep -E "^  [a-zA-Z_]|Duration|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|Registers Per|SM Frequency|Dynamic Shared|Block Size|Grid Size" $OUT/*_details*.txt | cut -c1-200
xz -9 $OUT/*_sass*.csv
