#!/bin/bash
# Call 4 (call 2's binaries): the three exploits of call 3 again, through gpu_session.sh as every earlier exploit run
# (call 3 ran check_exploits.py directly, without the goldens gpu_session.sh copies from the carried binaries, and every
# case of the three tasks failed: the exploits scored 0 where they must score their honest share).
ONLY_TASKS="5 6" SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 \
  ONLY_EXPLOITS="task5b_half_keys_when_timed|task5_bf16_cache_when_timed|task6b_half_heads_when_timed" \
  OUT=$OUT/s timeout 420 bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
cp $OUT/s/summary.txt $OUT/s/exploits.log $OUT/ 2>/dev/null
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
