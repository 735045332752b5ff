#!/usr/bin/env bash
# call 3 (calls 1 and 2 stashed FA4's wheel halves in ~/fa4-stash): ncu's source pages (SASS, executed instructions and
# stall samples per instruction) for one warm launch of the reference's bf16 forward (bench_task4_bf16, binaries from
# tools/gpu/pack_gpu.sh at eea467c) and of FA4's (../2026-11-28-fwd-vs-fa4-ncu/fa4_calls.py) at 1·16·16384·128 and
# 1·32·16384·64, non-causal. Everything into one tar (a call returns eight files at most).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a /tmp/o/summary.txt
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl 2>&1 | tail -2
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
i=0
for sh in "1 16 16384 128 0" "1 32 16384 64 0"; do i=$((i+1)); set -- $sh
  timeout 150 $NCU --section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight \
    -k regex:persistent_kernel --launch-skip 3 --launch-count 1 -o /tmp/ours$i \
    build/carry/reference/bench_task4_bf16 --shape=$1,$2,$3,$4 > /tmp/o/ours_run$i.log 2>&1; echo "ours $sh: exit $?" | tee -a /tmp/o/summary.txt
  timeout 150 $NCU --section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight \
    -k 'regex:(?i)flash|attention' --launch-skip 3 --launch-count 1 -o /tmp/fa4_$i \
    python3 docs/runs/2026-11-28-fwd-vs-fa4-ncu/fa4_calls.py $sh > /tmp/o/fa4_run$i.log 2>&1; echo "fa4 $sh: exit $?" | tee -a /tmp/o/summary.txt
  for w in ours fa4_; do
    $NCU -i /tmp/$w$i.ncu-rep --page details > /tmp/o/${w%_}_details$i.txt 2>&1
    $NCU -i /tmp/$w$i.ncu-rep --page source --csv --print-source sass > /tmp/o/${w%_}_sass$i.csv 2>&1
  done
done
grep -h -E "^  [a-zA-Z_]|Duration|Executed Instructions  " /tmp/o/*_details*.txt | cut -c1-150 | tee -a /tmp/o/summary.txt
python3 docs/runs/2026-11-28-bwd-vs-fa4-ncu/stalls_by_opcode.py /tmp/o/ours_sass1.csv /tmp/o/fa4_sass1.csv /tmp/o/ours_sass2.csv /tmp/o/fa4_sass2.csv | tee /tmp/o/stalls_by_opcode.txt
xz -9 /tmp/o/*_sass*.csv
tar -C /tmp -cf "$OUT/call3.tar" o
