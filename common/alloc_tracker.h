// alloc_tracker.h — peak heap bytes allocated through operator new during a region.
//
// Linking alloc_tracker.cpp replaces the global operator new/delete with counting versions.
// Task 3 uses it to show that FlashAttention never materialises an S×S buffer: every
// std::vector, new[] or container the implementation creates is counted.
#pragma once
#include <cstddef>

namespace attn::alloc_tracker {

void begin();                   // start a region: peak := current
size_t peak_bytes_since_begin();  // highest live heap bytes above the level at begin()

}  // namespace attn::alloc_tracker
