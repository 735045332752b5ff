#!/bin/bash
# Call 6: task5b_half_keys_when_timed again, graded by a grader built at 27c3118 after `make protect` (call 5's grader was
# linked before it: its compiled-in sums missed the new cases_paged.cpp, so every task it graded here scored 0 for an
# "edited" protected file). Call 4's carry otherwise.
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz && tar -C /tmp -xJf carry/c5.tar.xz
cp /tmp/c5/reference/* build/carry/reference/
mkdir -p /tmp/held && mv carry/gpu.tar.xz /tmp/held/
ONLY_TASKS="5" ONLY_EXPLOITS=task5b_half_keys SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
(cd $OUT/s && { [ -f exploits.log ] || tar -xzf logs.tar.gz ./exploits.log; }; cp exploits.log summary.txt $OUT/) 2>/dev/null
rm -rf $OUT/s
