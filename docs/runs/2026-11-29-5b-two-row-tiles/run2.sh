#!/bin/bash
# Call 2: why four stages fail at MQA in the benchmark (call 1: rt4q, "illegal instruction"). s4h is this change with
# the H100's choice forced (four stages, one row tile a block, for groups past one row tile): the benchmark's MQA row
# alone, then under compute-sanitizer (memcheck), then its other rows.
D=/tmp/c2; mkdir -p $D && tar -C /tmp -xJf carry/c2.tar.xz
export PATH=$PATH:$D/san/bin LD_LIBRARY_PATH=$D/san/lib:$LD_LIBRARY_PATH
timeout 60 $D/s4h/bench_task5_paged --shape 4 > $OUT/s4h_mqa.log 2>&1; echo "exit $?" >> $OUT/s4h_mqa.log
timeout 240 compute-sanitizer --tool memcheck --show-backtrace device $D/s4h/bench_task5_paged --shape 4 > $OUT/s4h_memcheck.log 2>&1
echo "exit $?" >> $OUT/s4h_memcheck.log
for s in 3 6; do timeout 60 $D/s4h/bench_task5_paged --shape $s 2>&1 | grep -E "ms |rror" | head -2 >> $OUT/s4h_rows.log; done
