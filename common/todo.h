// todo.h — how an unimplemented step of a skeleton reports itself.
//
// A skeleton function that the student has not written yet calls ATTNLAB_TODO("task1.3").
// That throws NotImplemented("task1.3 not implemented"), which the tests and the grader catch
// and report by name: a TODO never crashes the harness and never returns zeros that could pass.
//
// A CUDA kernel cannot throw: a skeleton's stub kernel calls ATTNLAB_KERNEL_TODO(out, 2, 1)
// (common/cuda/kernel_todo.cuh) instead, which writes into out[0] a NaN whose payload names the
// step. Where outputs are compared (common/compare.cpp), a NaN output whose element 0 carries that
// payload is reported as "task2.1 not implemented (the kernel is still the skeleton's stub)". The
// payload only changes the wording of a failure: a NaN always fails.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn {

struct NotImplemented : std::runtime_error {
    explicit NotImplemented(const std::string& step) : std::runtime_error(step + " not implemented") {}
};

// The float bits ATTNLAB_KERNEL_TODO writes: a quiet NaN (0x7FC00000), a 10-bit tag (0x2A5) in bits
// 12–21, the task in bits 6–11 and the step in bits 0–5. The harness poisons outputs with the
// plain quiet NaN (0x7FC00000), which never carries the tag.
#define ATTNLAB_KERNEL_TODO_BITS(task, step) \
    (0x7FEA5000u | ((static_cast<unsigned>(task) & 63u) << 6) | (static_cast<unsigned>(step) & 63u))

// "task2.1" when `bits` is the NaN of ATTNLAB_KERNEL_TODO(…, 2, 1); empty otherwise.
inline std::string kernel_todo_step(uint32_t bits) {
    if ((bits & 0xFFFFF000u) != 0x7FEA5000u) return "";
    return "task" + std::to_string((bits >> 6) & 63u) + "." + std::to_string(bits & 63u);
}

}  // namespace attn

#define ATTNLAB_TODO(step) throw ::attn::NotImplemented(step)
