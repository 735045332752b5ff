// bench_ladder_backward.cpp — the backward's ladder benchmark: task4_backward/bench_task4_backward.cpp with every rung of
// task4_backward/ladder (ladder_backward.h) beside the reference, at B=4 H=32 S=128 and B=4 H=16 S=1024 and 4096, D=128, each checked.
//   make ladder-task4-backward [ARGS="--quick"]        (course repository, a GPU)
#define ATTNLAB_BACKWARD_LADDER 1
#include "task4_backward/bench_task4_backward.cpp"
