#!/usr/bin/env bash
# call 7: Task 4's four parts' tests on the reference and the skeletons, the packed controls and exploits
# (tools/gpu/gpu_session.sh on tools/gpu/pack_gpu.sh's binaries); rung 9 before (ladder_base) and after (ladder_new)
# P·V's wait was held after its softmax, two rounds in turn (ladder_task4_bf16 --only=9).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
mkdir -p /tmp/x && tar -C /tmp -xJf carry/x.tar.xz
ONLY_TASKS="4" SKIP_GRADE=1 OUT=$OUT/session timeout 420 bash tools/gpu/gpu_session.sh > "$OUT/session.log" 2>&1; echo "gpu_session rc=$?" | tee -a "$OUT/summary.txt"
grep -E "passed|failed|caught|held|band|not implemented" "$OUT/session.log" | tail -30 | tee -a "$OUT/summary.txt"
mkdir -p "$OUT/logs"
for r in 1 2; do for b in base new; do
  timeout 120 /tmp/x/ladder_$b --only=9 > "$OUT/logs/${b}_r$r.log" 2>&1; echo "ladder $b r$r rc=$?" >> "$OUT/summary.txt"
done; done
(cd "$OUT" && tar -czf logs.tgz logs session 2>/dev/null; rm -rf logs)
