#!/bin/bash
# Call 5: the three GPU exploits packed with the fixed build (call 4's carry, 5b's test program and grader from
# 27c3118 laid over it), each graded by the reference grader as gpu_session.sh grades them (no tests, no grade, no
# controls, no benchmark). gpu_session.sh packs its logs into logs.tar.gz: exploits.log is taken out of it.
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz && tar -C /tmp -xJf carry/c4.tar.xz
cp /tmp/c4/reference/* build/carry/reference/ && cp /tmp/c4/skeleton/* build/carry/skeleton/
mkdir -p /tmp/held && mv carry/gpu.tar.xz /tmp/held/  # gpu_session.sh would unpack it again over the new programs
ONLY_TASKS="5 6" SKIP_TESTS=1 SKIP_GRADE=1 SKIP_CONTROLS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh > $OUT/session.log 2>&1
(cd $OUT/s && { [ -f exploits.log ] || tar -xzf logs.tar.gz ./exploits.log ./gpu.txt; }; cp exploits.log summary.txt gpu.txt $OUT/) 2>/dev/null
rm -rf $OUT/s
