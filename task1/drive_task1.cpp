// drive_task1.cpp — Task 1's debugging driver (common/debug_drive.h): every function of task1.h called in one process on
// small ragged shapes, each call announced before it runs. `make asan-task1` runs it under AddressSanitizer and UBSan
// (a read or write past a buffer stops at its line, with the stack); `make gdb-task1` runs it in gdb (a crash stops at
// its line: `bt` shows the calls, `frame N` and `print i` the state). `make asan-task1 ARGS=softmax_rows`: that step only.
// Nothing here is judged: `make task1` grades.
#include <cmath>
#include <cstdio>
#include <string>

#include "common/debug_drive.h"
#include "task1/task1.h"

using namespace attn::debug;

int main(int argc, char** argv) {
    const std::string only = start(argc, argv, "drive_task1");
    struct Shape {
        int B, S, H, D;
    };
    for (const Shape sh : {Shape{1, 1, 1, 8}, Shape{2, 127, 4, 16}, Shape{1, 129, 3, 32}}) {
        const int B = sh.B, S = sh.S, H = sh.H, D = sh.D, hidden = H * D, BH = B * H;
        const std::string at = "(B=" + std::to_string(B) + ", S=" + std::to_string(S) + ", H=" + std::to_string(H) +
                               ", D=" + std::to_string(D) + ")";
        // each buffer exactly its size: ASan sees one element past the end
        const std::vector<float> x = random_floats(size_t(B) * S * hidden, 1), k = random_floats(x.size(), 2),
                                 v = random_floats(x.size(), 3);
        std::vector<float> xh(x.size()), scores(size_t(BH) * S * S), oh(x.size()), out(x.size());
        call(only, "split_heads" + at, [&] { task1::split_heads(x.data(), xh.data(), B, S, H, D); });
        call(only, "attention_scores" + at, [&] { task1::attention_scores(xh.data(), xh.data(), scores.data(), BH, S, D); });
        call(only, "apply_causal_mask" + at, [&] { task1::apply_causal_mask(scores.data(), BH, S); });
        call(only, "softmax_rows" + at, [&] { task1::softmax_rows(scores.data(), int64_t(BH) * S, S); });
        call(only, "attention_output" + at, [&] { task1::attention_output(scores.data(), xh.data(), oh.data(), BH, S, D); });
        call(only, "merge_heads" + at, [&] { task1::merge_heads(oh.data(), out.data(), B, S, H, D); });
        for (bool causal : {false, true})
            call(only, std::string("naive_mha") + (causal ? " causal" : "") + at,
                 [&] { task1::naive_mha(x.data(), k.data(), v.data(), out.data(), B, S, hidden, H, causal); });
    }
    std::fprintf(stderr, "drive_task1: done (nothing here is judged: make task1 grades)\n");
    return 0;
}
