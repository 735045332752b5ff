// serve.cpp — the paged part's operations in runner_task5 (task5/serve.cpp adds them to Task 5's): the student's
// append and decode on staged buffers, each float word holding two bf16 (or one int32 of a table); a pointer the
// caller passed as null is null here too (task5_paged/remote.cpp); and the graded timing of the decode.
#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/serve.h"
#include "task5_paged/task5_paged.h"
#include "task5_paged/timed_inputs.h"

namespace attn::remote {

namespace {
__nv_bfloat16* bf16_arg(Call& c, size_t i) { return reinterpret_cast<__nv_bfloat16*>(nullable(c, i)); }
const int* ints_arg(Call& c, size_t i) { return reinterpret_cast<const int*>(c.p(i)); }

// Graded timing of paged_decode_bf16 (grader/timed.cpp): `calls` calls on fresh inputs (timed_inputs.h), o poisoned
// before each and read as floats for its fingerprint.
void timed_paged(Call& c) {
    const task5::timed::Geometry g{c.i("B"), c.i("H_q"), c.i("H_kv"), c.i("L"), c.i("D"), c.i("page_size")};
    const uint64_t seed = c.args().at("seed").get<uint64_t>();
    const std::vector<int> lengths = task5::timed::lengths(g);
    std::vector<int> table;  // call i's: shuffled by its nonce
    DeviceBuffer<uint16_t> q(g.q_elements()), k(g.pool_elements()), v(g.pool_elements()), o(g.q_elements());
    DeviceBuffer<float> o_float(g.q_elements());
    auto bf16 = [](const DeviceBuffer<uint16_t>& b) { return reinterpret_cast<__nv_bfloat16*>(b.get()); };
    c.reply.head["timing"] = timed_calls(
        c.i("calls"), seed, o_float.get(), o_float.size(),
        [&](int i) {
            const uint64_t s = seed + 4 * uint64_t(i);
            fill_normal_bf16(q.get(), q.size(), s), fill_normal_bf16(k.get(), k.size(), s + 1), fill_normal_bf16(v.get(), v.size(), s + 2);
            table = task5::timed::page_table(g, s);
            o.poison();
        },
        [&] {
            task5::paged_decode_bf16(bf16(q), bf16(k), bf16(v), bf16(o), table.data(), lengths.data(), g.B, g.H_q, g.H_kv, g.D,
                                     g.page_size, g.num_pages(), g.pages_per_seq());
        },
        [&] { task4::bf16_convert::from_bf16(bf16(o), o_float.get(), o_float.size()); });
}

}  // namespace

Handlers task5_paged_handlers() {
    return {
        {"timed_paged", timed_paged},
        {"paged_append_bf16", [](Call& c) {
             task5::paged_append_bf16(bf16_arg(c, 0), bf16_arg(c, 1), bf16_arg(c, 2), bf16_arg(c, 3), ints_arg(c, 4), ints_arg(c, 5),
                                      c.i("B"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("num_pages"), c.i("pages_per_seq"));
         }},
        {"paged_append_f32", [](Call& c) {
             task5::paged_append_f32(nullable(c, 0), nullable(c, 1), nullable(c, 2), nullable(c, 3), ints_arg(c, 4), ints_arg(c, 5),
                                     c.i("B"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("num_pages"), c.i("pages_per_seq"));
         }},
        {"paged_decode_f32", [](Call& c) {
             task5::paged_decode_f32(nullable(c, 0), nullable(c, 1), nullable(c, 2), nullable(c, 3), ints_arg(c, 4), ints_arg(c, 5),
                                     c.i("B"), c.i("H_q"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("num_pages"),
                                     c.i("pages_per_seq"));
         }},
        {"paged_decode_bf16", [](Call& c) {
             task5::paged_decode_bf16(bf16_arg(c, 0), bf16_arg(c, 1), bf16_arg(c, 2), bf16_arg(c, 3), ints_arg(c, 4), ints_arg(c, 5),
                                      c.i("B"), c.i("H_q"), c.i("H_kv"), c.i("D"), c.i("page_size"), c.i("num_pages"),
                                      c.i("pages_per_seq"));
         }},
    };
}

}  // namespace attn::remote
