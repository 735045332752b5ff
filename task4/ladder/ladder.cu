// ladder.cu — instantiates Task 4's ladder (flash_ladder.cuh, flash_tf32.cuh) for the staff benchmark.
#include "task4/ladder/accuracy_f64.cuh"
#include "task4/ladder/flash_ladder.cuh"
#include "task4/ladder/flash_tf32.cuh"
#include "task4/ladder/ladder.h"

namespace task4_ladder {

std::vector<Step> steps() {
    using namespace tf32;
    return {
        {"old plan", "one thread per query row, D at run time (Br = Bc = 32)", forward_thread_per_row},
        {"no padding", "register tiles: 8 rows x 4 keys per thread, 16 lanes per row; unpadded rows", forward_tiled<NoPad>},
        {"three buffers", "rows of shared memory padded by 4 floats", forward_tiled<ThreeBuffers>},
        {"plan", "P written over K: 101 KB per block, two blocks per SM", forward_tiled<Plan>},
        {"fast softmax", "exp2 with the scale folded in, masks only on edge tiles", forward_tiled<FastSoftmax>},
        {"cp.async", "V arrives while S = Q K^T is computed (the reference's design)", forward_tiled<Async>},
        {"3xTF32", "tensor cores, error-compensated TF32 (the top rung: its tile choice per shape)", forward_tf32, true},
        {"tf32 4x32 Bc32 1st", "4 warps x 32 rows, 32-key tiles, one buffer each (2 blocks/SM)", forward_config<4, 2, 32, 1>, true},
        {"tf32 4x32 Bc32 2st", "4 warps x 32 rows, 32-key tiles, double-buffered", forward_config<4, 2, 32, 2>, true},
        {"tf32 8x32 Bc32 2st", "8 warps x 32 rows, 32-key tiles, double-buffered (large shapes)", forward_config<8, 2, 32, 2>, true},
        {"tf32 4x16 Bc32 1st", "4 warps x 16 rows, 32-key tiles, one buffer each", forward_config<4, 1, 32, 1>, true},
        {"tf32 4x16 Bc64 1st", "4 warps x 16 rows, 64-key tiles, one buffer each (2 blocks/SM; small shapes)", forward_config<4, 1, 64, 1>, true},
        {"tf32 8x16 Bc64 2st", "8 warps x 16 rows, 64-key tiles, double-buffered", forward_config<8, 1, 64, 2>, true},
    };
}

ErrorStats error_vs_f64(const float* q, const float* k, const float* v, const float* o, int Sq, int Sk, int D, bool causal,
                        int h0, int nh, int stride) {
    return f64::error_vs_f64(q, k, v, o, Sq, Sk, D, causal, h0, nh, stride);
}

}  // namespace task4_ladder
