// serve.cpp — runner_task5's operations: the student's cache and decode functions on staged
// buffers, and a whole prefill-then-decode run whose caches stay here (the course's run: sending
// 1 GB of cache per step would take longer than the run). Inputs of the run come from the trusted
// side's nonce by the harness's counter-based fill, which the trusted side repeats to check it.
#include <optional>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/cuda/timed_calls.h"
#include "common/remote/launch_log_runner.h"
#include "common/remote/serve.h"
#include "task5/task5.h"

namespace attn::remote {

Handlers task5_paged_handlers();  // the paged part's operations (task5_paged/serve.cpp): runner_task5 serves both parts

namespace {

// Prefill from the nonce, then `steps` steps; returns each step's o and the cache rows it appended.
void decode_run(Call& c) {
    const int B = c.i("B"), H = c.i("H"), D = c.i("D"), max_seq = c.i("max_seq"), prefill = c.i("prefill"),
              steps = c.i("steps");
    const uint64_t seed = c.args().at("seed").get<uint64_t>();
    const size_t BH = size_t(B) * H;
    DeviceBuffer<float> kc(BH * max_seq * D), vc(kc.size()), kp(BH * prefill * D), vp(kp.size());
    DeviceBuffer<float> q(BH * D), kn(q.size()), vn(q.size()), o(q.size());
    kc.poison(), vc.poison();
    fill_normal(kp.get(), kp.size(), seed), fill_normal(vp.get(), vp.size(), seed + 1);
    std::optional<launch_log::Recording> student_call;  // the student's launches, for a timeout's message
    student_call.emplace();
    task5::store_prefill(kc.get(), vc.get(), kp.get(), vp.get(), B, H, max_seq, prefill, D);
    student_call.reset();
    std::vector<float> outs, krows, vrows, row(BH * D);
    for (int step = 0; step < steps; ++step) {
        const int pos = prefill + step;
        fill_normal(q.get(), q.size(), seed + 10 + 3 * step), fill_normal(kn.get(), kn.size(), seed + 11 + 3 * step);
        fill_normal(vn.get(), vn.size(), seed + 12 + 3 * step);
        o.poison();
        student_call.emplace();
        task5::update_cache(kc.get(), vc.get(), kn.get(), vn.get(), B, H, max_seq, D, pos);
        task5::decode_attention(q.get(), kc.get(), vc.get(), o.get(), B, H, max_seq, pos + 1, D);
        student_call.reset();
        CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> got = o.download();
        outs.insert(outs.end(), got.begin(), got.end());
        for (auto [cache, rows] : {std::pair{&kc, &krows}, std::pair{&vc, &vrows}}) {
            CUDA_CHECK(cudaMemcpy2D(row.data(), D * sizeof(float), cache->get() + size_t(pos) * D,
                                    size_t(max_seq) * D * sizeof(float), D * sizeof(float), BH, cudaMemcpyDeviceToHost));
            rows->insert(rows->end(), row.begin(), row.end());
        }
    }
    c.reply.buffers = {std::move(outs), std::move(krows), std::move(vrows)};
}

}  // namespace

Handlers task_handlers() {
    using namespace task5;
    Handlers h = {
        {"store_prefill", [](Call& c) {
             store_prefill(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("H"), c.i("max_seq"), c.i("S"), c.i("D"));
         }},
        {"update_cache", [](Call& c) {
             update_cache(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("H"), c.i("max_seq"), c.i("D"), c.i("pos"));
         }},
        {"decode_attention", [](Call& c) {
             decode_attention(c.p(0), c.p(1), c.p(2), c.p(3), c.i("B"), c.i("H"), c.i("max_seq"), c.i("len"), c.i("D"));
         }},
        {"decode_run", decode_run},
        {"timed", [](Call& c) {  // graded timing of decode_attention over a full cache, fresh inputs per call
             const int B = c.i("B"), H = c.i("H"), L = c.i("L"), D = c.i("D");
             const size_t nc = size_t(B) * H * L * D, nq = size_t(B) * H * D;
             const uint64_t seed = c.args().at("seed").get<uint64_t>();
             DeviceBuffer<float> kc(nc), vc(nc), q(nq), o(nq);
             c.reply.head["timing"] = timed_calls(
                 c.i("calls"), seed, o.get(), nq,
                 [&](int i) {
                     const uint64_t s = seed + 4 * uint64_t(i);
                     fill_normal(q.get(), nq, s), fill_normal(kc.get(), nc, s + 1), fill_normal(vc.get(), nc, s + 2);
                     o.poison();
                 },
                 [&] { task5::decode_attention(q.get(), kc.get(), vc.get(), o.get(), B, H, L, L, D); });
         }},
    };
    for (auto& [op, fn] : task5_paged_handlers()) h.emplace(op, fn);
    return h;
}

}  // namespace attn::remote
