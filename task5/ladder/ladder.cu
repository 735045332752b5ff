// ladder.cu — Task 5's ladder steps (decode_ladder.cuh) as functions, for the staff benchmark.
#include "task5/ladder/decode_ladder.cuh"
#include "task5/ladder/ladder.h"

namespace task5_ladder {

void decode_plan(const float* q, const float* kc, const float* vc, float* o, int B, int H, int max_seq, int len, int D) {
    decode(q, kc, vc, o, B, H, max_seq, len, D, false);
}
void decode_split(const float* q, const float* kc, const float* vc, float* o, int B, int H, int max_seq, int len, int D) {
    decode(q, kc, vc, o, B, H, max_seq, len, D, true);
}

}  // namespace task5_ladder
