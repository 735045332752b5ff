// test_timed_oracles.cpp — Catch2 tests of the trusted side's GPU oracles for timed calls (needs a GPU; prints "skipped:
// no CUDA device" without): part 4d's cuBLAS float32 backward from o and lse (common/cuda/bf16_backward_oracle.h)
// against the float64 oracle of the part's cases, and the TN GEMM it is built on.   make grader-gpu-tests
#include <catch2/catch.hpp>

#include "common/cuda/backward_oracle.h"
#include "common/cuda/bf16_backward_oracle.h"
#include "common/cuda/bf16_tensor.h"  // relative_l2_error
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_case.h"
#include "common/seed.h"
#include "common/tensor.h"

using namespace attn;

TEST_CASE("CublasGemm::tn: C = Aᵀ·B, row-major, batched", "[oracle]") {
    const int batch = 2, M = 37, N = 19, K = 53;
    auto g = rng_for("test.gemm_tn");
    const Tensor a = random_tensor(g, {batch, K, M}), b = random_tensor(g, {batch, K, N});
    auto da = to_device(a), db = to_device(b);
    DeviceBuffer<float> dc(size_t(batch) * M * N);
    CublasGemm gemm;
    gemm.tn(da.get(), db.get(), dc.get(), batch, M, N, K, 0.5f);
    const Tensor c = to_host(dc, {batch, M, N});
    for (int x = 0; x < batch; ++x)
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                double want = 0;
                for (int k = 0; k < K; ++k) want += double(a.data[(size_t(x) * K + k) * M + m]) * b.data[(size_t(x) * K + k) * N + n];
                REQUIRE(c.data[(size_t(x) * M + m) * N + n] == Approx(0.5 * want).margin(1e-4));
            }
}

TEST_CASE("4d's timed-call oracle: cuBLAS float32 from o and lse agrees with the float64 oracle", "[oracle]") {
    struct Case { int BH, Sq, Sk, D; bool causal; };
    // ragged rows, Sq > Sk causal (rows that see no key: lse = +∞, zero gradients), a single query, D = 32 … 128
    for (const Case s : {Case{3, 129, 129, 64, true}, Case{2, 200, 77, 128, true}, Case{2, 1, 300, 32, false}, Case{1, 127, 250, 128, false}}) {
        CAPTURE(s.BH, s.Sq, s.Sk, s.D, s.causal);
        auto g = rng_for("test.bf16_backward_oracle");
        const Tensor q = random_tensor(g, {s.BH, s.Sq, s.D}), k = random_tensor(g, {s.BH, s.Sk, s.D}),
                     v = random_tensor(g, {s.BH, s.Sk, s.D}), dout = random_tensor(g, {s.BH, s.Sq, s.D});
        auto dq_ = to_device(q), dk_ = to_device(k), dv_ = to_device(v), ddout = to_device(dout);
        const size_t nq = q.data.size(), nk = k.data.size();
        DeviceBuffer<float> o(nq), lse(size_t(s.BH) * s.Sq), want_dq(nq), want_dk(nk), want_dv(nk), dq(nq), dk(nk), dv(nk);
        task4::attention_backward_f64_gpu(dq_.get(), dk_.get(), dv_.get(), ddout.get(), o.get(), lse.get(), want_dq.get(), want_dk.get(),
                                          want_dv.get(), s.BH, s.Sq, s.Sk, s.D, s.causal);
        CublasGemm gemm;
        attention_backward_from_lse(gemm, dq_.get(), dk_.get(), dv_.get(), o.get(), ddout.get(), lse.get(), dq.get(), dk.get(), dv.get(),
                                    s.BH, s.Sq, s.Sk, s.D, s.causal);
        const Shape qs{s.BH, s.Sq, s.D}, ks{s.BH, s.Sk, s.D};
        CHECK(relative_l2_error(to_host(dq, qs), to_host(want_dq, qs)) < 1e-5);
        CHECK(relative_l2_error(to_host(dk, ks), to_host(want_dk, ks)) < 1e-5);
        CHECK(relative_l2_error(to_host(dv, ks), to_host(want_dv, ks)) < 1e-5);
        if (s.causal && s.Sq > s.Sk) {  // row 0 sees no key
            const Tensor got = to_host(dq, qs);
            for (int d = 0; d < s.D; ++d) CHECK(got.data[size_t(d)] == 0.0f);
        }
    }
}
