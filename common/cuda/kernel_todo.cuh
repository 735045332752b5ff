// kernel_todo.cuh — how an unwritten CUDA kernel of a skeleton reports itself.
//
// A kernel cannot throw NotImplemented (common/todo.h). A skeleton's stub kernel body is
//
//     ATTNLAB_KERNEL_TODO(out, 2, 1);   // delete this line when you write the kernel
//
// Thread 0 of block 0 writes into out[0] a NaN whose payload encodes the task and the step
// (ATTNLAB_KERNEL_TODO_BITS); every other element keeps the NaN the harness poisoned it with.
// The comparison (common/compare.cpp) recognises that NaN in element 0 and reports
// "task2.1 not implemented (the kernel is still the skeleton's stub)" instead of a count of NaNs.
// It only ever words a failure: an output holding a NaN never passes.
#pragma once
#include "common/todo.h"

#define ATTNLAB_KERNEL_TODO(out_ptr, task, step)                                                        \
    do {                                                                                               \
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 &&             \
            blockIdx.y == 0 && blockIdx.z == 0)                                                        \
            (out_ptr)[0] = __uint_as_float(ATTNLAB_KERNEL_TODO_BITS(task, step));                      \
    } while (0)
