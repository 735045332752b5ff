// ladder.cu — instantiates Task 4's ladder (flash_ladder.cuh) for the staff benchmark.
#include "task4/ladder/flash_ladder.cuh"
#include "task4/ladder/ladder.h"

namespace task4_ladder {

std::vector<Step> steps() {
    return {
        {"old plan", "one thread per query row, D at run time (Br = Bc = 32)", forward_thread_per_row},
        {"no padding", "register tiles: 8 rows x 4 keys per thread, 16 lanes per row; unpadded rows", forward_tiled<NoPad>},
        {"three buffers", "rows of shared memory padded by 4 floats", forward_tiled<ThreeBuffers>},
        {"plan", "P written over K: 101 KB per block, two blocks per SM", forward_tiled<Plan>},
        {"fast softmax", "exp2 with the scale folded in, masks only on edge tiles", forward_tiled<FastSoftmax>},
        {"cp.async", "V arrives while S = Q K^T is computed (the reference's design)", forward_tiled<Async>},
    };
}

}  // namespace task4_ladder
