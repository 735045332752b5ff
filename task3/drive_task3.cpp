// drive_task3.cpp — Task 3's debugging driver (common/debug_drive.h): flash_attention_cpu called in one process on
// small ragged shapes and tile sizes that divide nothing, each call announced before it runs. `make asan-task3` runs it
// under AddressSanitizer and UBSan (a tile read past the end of K stops at its line, with the stack); `make gdb-task3`
// runs it in gdb. `make asan-task3 ARGS="S=129"`: those calls only. Nothing here is judged: `make task3` grades.
#include <cstdio>
#include <string>

#include "common/debug_drive.h"
#include "task3/task3.h"

using namespace attn::debug;

int main(int argc, char** argv) {
    const std::string only = start(argc, argv, "drive_task3");
    struct Shape {
        int B, H, S, D, Br, Bc;
    };
    for (const Shape s : {Shape{1, 1, 1, 16, 4, 4}, Shape{2, 3, 127, 32, 16, 32}, Shape{1, 2, 129, 64, 32, 24},
                          Shape{1, 1, 100, 8, 7, 13}})
        for (bool causal : {false, true}) {
            const size_t n = size_t(s.B) * s.H * s.S * s.D;
            // each buffer exactly its size: ASan sees one element past the end
            const std::vector<float> q = random_floats(n, 1), k = random_floats(n, 2), v = random_floats(n, 3);
            std::vector<float> o(n);
            const std::string what = "flash_attention_cpu(B=" + std::to_string(s.B) + ", H=" + std::to_string(s.H) +
                                     ", S=" + std::to_string(s.S) + ", D=" + std::to_string(s.D) + ", Br=" + std::to_string(s.Br) +
                                     ", Bc=" + std::to_string(s.Bc) + (causal ? ", causal)" : ")");
            call(only, what, [&] {
                task3::flash_attention_cpu(q.data(), k.data(), v.data(), o.data(), s.B, s.H, s.S, s.D, s.Br, s.Bc, causal);
            });
        }
    std::fprintf(stderr, "drive_task3: done (nothing here is judged: make task3 grades)\n");
    return 0;
}
