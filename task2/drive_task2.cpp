// drive_task2.cpp — Task 2's profiling driver (common/cuda/drive.h): your kernels called directly, for
// `make profile-task2` (Nsight Compute) and `make sanitize-task2` (compute-sanitizer).
//   profile: gemm_nn 4096 × 4096 × 4096, then softmax_batched 4096 rows × 16384 (two profiled calls, in that order)
//   small:   softmax rows of 1, 7 and 4097; gemm_nn and gemm_nt 127 × 129 × 67 and 1 × 300 × 5 (batch 2);
//            scale_and_causal_mask; attention_heads at S = 1, 127, 129
#include <fmt/format.h>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/drive.h"
#include "task2/task2.h"

using namespace attn;

namespace {

void profile() {
    {
        const int n = 4096;
        DeviceBuffer<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
        fill_normal(a.get(), a.size(), 1), fill_normal(b.get(), b.size(), 2);
        profile_call(fmt::format("gemm_nn {0} x {0} x {0}", n), [&] { task2::gemm_nn(a.get(), b.get(), c.get(), 1, n, n, n); });
    }
    const int rows = 4096, cols = 16384;
    DeviceBuffer<float> in(size_t(rows) * cols), out(size_t(rows) * cols);
    fill_normal(in.get(), in.size(), 3);
    profile_call(fmt::format("softmax_batched {} x {}", rows, cols), [&] { task2::softmax_batched(in.get(), out.get(), rows, cols); });
}

void small() {
    for (int cols : {1, 7, 4097})
        for (int rows : {1, 3}) {
            DeviceBuffer<float> in(size_t(rows) * cols), out(size_t(rows) * cols);
            fill_normal(in.get(), in.size(), 1);
            small_call(fmt::format("softmax_batched {} x {}", rows, cols), [&] { task2::softmax_batched(in.get(), out.get(), rows, cols); });
        }
    const int shapes[][3] = {{127, 129, 67}, {1, 300, 5}};
    for (const auto& s : shapes) {
        const int batch = 2, M = s[0], N = s[1], K = s[2];
        DeviceBuffer<float> a(size_t(batch) * M * K), b(size_t(batch) * K * N), c(size_t(batch) * M * N);
        fill_normal(a.get(), a.size(), 2), fill_normal(b.get(), b.size(), 3);
        small_call(fmt::format("gemm_nn batch={} M={} N={} K={}", batch, M, N, K), [&] { task2::gemm_nn(a.get(), b.get(), c.get(), batch, M, N, K); });
        small_call(fmt::format("gemm_nt batch={} M={} N={} K={}", batch, M, N, K), [&] { task2::gemm_nt(a.get(), b.get(), c.get(), batch, M, N, K); });
        for (bool causal : {false, true})
            small_call(fmt::format("scale_and_causal_mask batch={} {} x {}{}", batch, M, N, causal ? " causal" : ""),
                       [&] { task2::scale_and_causal_mask(c.get(), batch, M, N, 0.125f, causal); });
    }
    for (int S : {1, 127, 129})
        for (bool causal : {false, true}) {
            const int BH = 3, D = 64;
            const size_t n = size_t(BH) * S * D;
            DeviceBuffer<float> q(n), k(n), v(n), o(n), scores(size_t(BH) * S * S);
            fill_normal(q.get(), n, 4), fill_normal(k.get(), n, 5), fill_normal(v.get(), n, 6);
            small_call(fmt::format("attention_heads BH={} S={} D={}{}", BH, S, D, causal ? " causal" : ""),
                       [&] { task2::attention_heads(q.get(), k.get(), v.get(), o.get(), BH, S, D, causal, scores.get()); });
        }
}

}  // namespace

int main(int argc, char** argv) { return drive_main("drive_task2", argc, argv, profile, small); }
