// task3.h — Task 3: FlashAttention-2 (Algorithm 1, forward) on the CPU. The frozen interface.
//
// Q, K, V, O: [B, H, S, D] row-major float32. Br × Bc is the tile: Br query rows against Bc key
// rows at a time, any positive sizes, including ones that do not divide S. The implementation
// never holds more than one Br × Bc tile of scores: the tests read the runner's peak memory from the operating system
// (every way of allocating counts), and half of one S×S float matrix beyond what the harness alone takes fails.
#pragma once

namespace task3 {

void flash_attention_cpu(const float* Q, const float* K, const float* V, float* O, int B, int H, int S, int D, int Br,
                         int Bc, bool causal);

}  // namespace task3
