#!/bin/bash
# Call 4: the three GPU exploits packed with the kept build (tools/gpu/pack_gpu.sh at dc5aa2f, a clean tree), each
# graded by the reference grader, as gpu_session.sh grades them (no tests, no grade, no controls, no benchmark).
ONLY_TASKS="5 6" SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
cp $OUT/s/exploits.log $OUT/s/summary.txt $OUT/s/gpu.txt $OUT/ 2>/dev/null; rm -rf $OUT/s
