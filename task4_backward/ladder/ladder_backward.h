// ladder_backward.h — the backward's ladder (course staff material; not in the student kit): each rung a complete,
// correct backward behind the interface of task4_backward/task4_backward.h, timed and checked by `make ladder-task4-backward`
// (task4_backward/bench_task4_backward.cpp built with the rungs beside the reference).
//   1 naive_backward               recompute everything: one thread per query row (dQ) and one per key (dK, dV), D at
//                                  run time, every product a loop over global memory
//   2–5, and the alternatives      the reference's kernels with a choice of design
//                                  (flash_attention_backward_variant, task4_backward/reference/flash_attention_backward.cu)
//   6 tf32_backward                the top rung: the reference's plan on the TF32 tensor cores at fp32 accuracy
//                                  (3xTF32, flash_backward_tf32.cuh; its own benchmark: bench_backward_tf32.cpp)
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace task4 {

// task4_backward/reference/flash_attention_backward.cu: the reference is (true, true, true, false); the others are compiled for
// D = 128.
void flash_attention_backward_variant(bool dq_atomic, bool prefetch, bool vec_red, bool share_ps, const float* q,
                                      const float* k, const float* v, const float* o, const float* dout, const float* lse,
                                      float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal);

namespace ladder_backward {

void naive_backward(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse,
                    float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal);

// The top rung (tf32_backward.cu); the FFMA reference where this GPU cannot run it (tf32_backward_runs_here).
void tf32_backward(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse,
                   float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal);
// The same with S and dP summed over all of D inside the tensor core's accumulators (the rung's first version).
void tf32_backward_s_dp_whole(const float* q, const float* k, const float* v, const float* o, const float* dout, const float* lse,
                              float* dq, float* dk, float* dv, int B, int H, int Sq, int Sk, int D, bool causal);
bool tf32_backward_runs_here(int D);

struct Rung {
    std::string name;
    std::function<void(const float*, const float*, const float*, const float*, const float*, const float*, float*, float*,
                       float*, int, int, int, int, int, bool)>
        fn;
    int max_S;  // longer rows are not timed (the naive rung: minutes)
};
std::vector<Rung> rungs();  // the ladder, then the alternatives the README compares

}  // namespace ladder_backward
}  // namespace task4
