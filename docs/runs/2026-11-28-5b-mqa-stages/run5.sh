#!/usr/bin/env bash
# the grader's reference times for 5b: the build before (three stages everywhere) and the new one (four stages where a
# group is larger than one row tile), in turn, three times each, one machine
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar -C carry -xJf carry/w.tar.xz
W=$PWD/carry/w
[ -x /usr/bin/bwrap ] || install -m 755 $W/bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$W/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2 3; do for b in old new; do
  cp grader/reference_times.json /tmp/rt_${b}_$r.json
  timeout 200 python3 tools/gpu/reference_times.py --grader $W/$b/grader --bin-dir $W/$b --file /tmp/rt_${b}_$r.json --part 5b > /tmp/log_${b}_$r 2>&1 || echo "$b $r failed"
  echo "$b $r: $(python3 -c "
import json,sys; d=json.load(open('/tmp/rt_${b}_$r.json'))
for k,v in d['gpus'].items():
  if 'H100' in k: print(' '.join(f'{x:.4f}' for x in v['task5b'].values()))")"
done; done | tee "$OUT/reftimes_pairs.txt"
