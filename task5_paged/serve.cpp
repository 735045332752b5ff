// serve.cpp — the paged part's operations in runner_task5 (task5/serve.cpp adds them to Task 5's): the student's
// append and decode on staged buffers, each float word holding two bf16 (or one int32 of a table); a pointer the
// caller passed as null is null here too (task5_paged/remote.cpp).
#include "common/remote/serve.h"
#include "task5_paged/task5_paged.h"

namespace attn::remote {

namespace {
__nv_bfloat16* bf16_arg(Call& c, size_t i) { return reinterpret_cast<__nv_bfloat16*>(nullable(c, i)); }
const int* ints_arg(Call& c, size_t i) { return reinterpret_cast<const int*>(c.p(i)); }
}  // namespace

Handlers task5_paged_handlers() {
    return {
        {"paged_append_bf16", [](Call& c) {
             task5::paged_append_bf16(bf16_arg(c, 0), bf16_arg(c, 1), bf16_arg(c, 2), bf16_arg(c, 3), ints_arg(c, 4), ints_arg(c, 5),
                                      c.i("B"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("num_pages"), c.i("pages_per_seq"));
         }},
        {"paged_decode_bf16", [](Call& c) {
             task5::paged_decode_bf16(bf16_arg(c, 0), bf16_arg(c, 1), bf16_arg(c, 2), bf16_arg(c, 3), ints_arg(c, 4), ints_arg(c, 5),
                                      c.i("B"), c.i("H_q"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("num_pages"),
                                      c.i("pages_per_seq"));
         }},
    };
}

}  // namespace attn::remote
