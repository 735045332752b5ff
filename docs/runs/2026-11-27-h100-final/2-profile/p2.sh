#!/usr/bin/env bash
# ncu source-level profile of 4d's key-tile kernel (dQ from the registers) at 1·16·16384·128 and 4·16·4096·128, non-causal
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
mkdir -p build && tar -C build -xJf carry/var.tar.xz
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
i=0
for sh in 1,16,16384,128 4,16,4096,128; do i=$((i+1))
  timeout 200 $NCU --set full --import-source yes -k regex:key_tile --launch-skip 2 --launch-count 1 -o /tmp/b$i build/var/B0 --shape=$sh > /tmp/ncu_run$i.log 2>&1; echo "ncu $sh exit $?"; tail -3 /tmp/ncu_run$i.log
  $NCU -i /tmp/b$i.ncu-rep --page details > "$OUT/details$i.txt" 2>&1
  $NCU -i /tmp/b$i.ncu-rep --page source --csv --print-source cuda,sass > "$OUT/src$i.csv" 2>&1
done
grep -E "key_tile|Duration|Issue Slots Busy|highest-util|SM Frequency|Warp Cycles Per Issued" $OUT/details*.txt | cut -c1-200
xz -9 $OUT/src*.csv
