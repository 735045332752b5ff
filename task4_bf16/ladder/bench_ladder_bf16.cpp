// bench_ladder_bf16.cpp — the bf16 ladder's benchmark: task4_bf16/bench_task4_bf16.cpp with every rung of
// task4_bf16/ladder (ladder_bf16.h) beside the reference, at the same shapes, each checked.
//   make ladder-task4-bf16 [ARGS="--quick"]        (course repository, a GPU)
#define ATTNLAB_BF16_LADDER 1
#include "task4_bf16/bench_task4_bf16.cpp"
