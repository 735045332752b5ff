// backward_shape.h — the shape of a backward case (Task 4's backward parts, 4c and 4d): its tensors' shapes and how a
// case names it.
#pragma once
#include <fmt/format.h>

#include <string>

#include "common/tensor.h"

namespace task4 {

// q [B, H, Sq, D], k [B, H, Sk, D], lse [B, H, Sq].
struct Shape4 {
    int B, H, Sq, Sk, D;
    bool causal;
    std::string str() const {
        return Sq == Sk ? fmt::format("B={} H={} S={} D={}{}", B, H, Sq, D, causal ? " causal" : "")
                        : fmt::format("B={} H={} Sq={} Sk={} D={}{}", B, H, Sq, Sk, D, causal ? " causal" : "");
    }
    attn::Shape qs() const { return {B, H, Sq, D}; }
    attn::Shape ks() const { return {B, H, Sk, D}; }
    attn::Shape ls() const { return {B, H, Sq}; }
};

}  // namespace task4
