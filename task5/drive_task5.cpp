// drive_task5.cpp — Task 5's profiling driver (common/cuda/drive.h): your store_prefill, update_cache and
// decode_attention called directly, for `make profile-task5` (Nsight Compute) and `make sanitize-task5`
// (compute-sanitizer).
//   profile: decode_attention B=1 H=32 L=32768 D=128 (max_seq 32768; the cache filled with fill_normal)
//   small:   store_prefill and update_cache on a ragged cache; decode lengths 1, 127, 1000 with head_dim
//            32/64/96/128 (max_seq 1031: positions past len hold NaN, which must not be read)
#include <fmt/format.h>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/drive.h"
#include "task5/task5.h"

using namespace attn;

namespace {

void profile() {
    const int B = 1, H = 32, L = 32768, D = 128;
    const size_t nc = size_t(B) * H * L * D, n = size_t(B) * H * D;
    DeviceBuffer<float> kc(nc), vc(nc), q(n), o(n);
    fill_normal(q.get(), n, 1), fill_normal(kc.get(), nc, 2), fill_normal(vc.get(), nc, 3);
    profile_call(fmt::format("decode_attention B={} H={} L={} D={}", B, H, L, D),
                 [&] { task5::decode_attention(q.get(), kc.get(), vc.get(), o.get(), B, H, L, L, D); });
}

void small() {
    const int B = 2, H = 3, max_seq = 1031;
    for (int D : {32, 64, 96, 128}) {
        const size_t nc = size_t(B) * H * max_seq * D, n = size_t(B) * H * D;
        DeviceBuffer<float> kc(nc), vc(nc), q(n), o(n), kn(n), vn(n);
        kc.poison(), vc.poison();  // NaN past what is written: a kernel that reads past len shows it in o
        for (int S : {1, 127, 1000}) {
            const size_t np = size_t(B) * H * S * D;
            DeviceBuffer<float> kp(np), vp(np);
            fill_normal(kp.get(), np, 10 + S), fill_normal(vp.get(), np, 20 + S);
            small_call(fmt::format("store_prefill B={} H={} S={} D={} max_seq={}", B, H, S, D, max_seq),
                       [&] { task5::store_prefill(kc.get(), vc.get(), kp.get(), vp.get(), B, H, max_seq, S, D); });
            fill_normal(kn.get(), n, 30 + S), fill_normal(vn.get(), n, 40 + S), fill_normal(q.get(), n, 50 + S);
            small_call(fmt::format("update_cache B={} H={} D={} pos={}", B, H, D, S),
                       [&] { task5::update_cache(kc.get(), vc.get(), kn.get(), vn.get(), B, H, max_seq, D, S); });
            for (int len : {S, S + 1})
                small_call(fmt::format("decode_attention B={} H={} len={} D={} max_seq={}", B, H, len, D, max_seq),
                           [&] { task5::decode_attention(q.get(), kc.get(), vc.get(), o.get(), B, H, max_seq, len, D); });
        }
    }
}

}  // namespace

int main(int argc, char** argv) { return drive_main("drive_task5", argc, argv, profile, small); }
