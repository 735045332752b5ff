// test_timed_oracles.cpp — Catch2 tests of the trusted side's GPU oracles for timed calls (needs a GPU; prints "skipped:
// no CUDA device" without): part 4d's cuBLAS float32 backward from o and lse (common/cuda/bf16_backward_oracle.h)
// against the float64 oracle of the part's cases, and the TN GEMM it is built on; part 6b's server-step oracle
// (common/cuda/paged_oracle.h) against plain loops over the same pages.   make grader-gpu-tests
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/cuda/backward_oracle.h"
#include "common/cuda/bf16_backward_oracle.h"
#include "common/cuda/bf16_tensor.h"  // relative_l2_error
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/digest.h"
#include "common/cuda/gpu_case.h"
#include "common/cuda/paged_oracle.h"
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

namespace {

// A bf16 device buffer as floats on the host.
std::vector<float> host_floats(const DeviceBuffer<uint16_t>& b) {
    std::vector<uint16_t> bits(b.size());
    CUDA_CHECK(cudaMemcpy(bits.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> out(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) {
        const uint32_t w = uint32_t(bits[i]) << 16;
        std::memcpy(&out[i], &w, sizeof w);
    }
    return out;
}

DeviceBuffer<float> device_floats(const std::vector<float>& x) {
    DeviceBuffer<float> b(x.size());
    CUDA_CHECK(cudaMemcpy(b.get(), x.data(), b.bytes(), cudaMemcpyHostToDevice));
    return b;
}

DeviceBuffer<uint16_t> filled_bf16(size_t n, uint64_t seed) {
    DeviceBuffer<uint16_t> b(n);
    fill_normal_bf16(b.get(), n, seed);
    return b;
}

// Attention of one query row (H_q heads) over `keys` rows of K and V (H_kv heads each, row r at k[r], v[r]), in double.
void attend_row(const float* q, const std::vector<const float*>& k, const std::vector<const float*>& v, float* o, int H_q, int H_kv, int D) {
    const int g = H_q / H_kv;
    for (int h = 0; h < H_q; ++h) {
        std::vector<double> s(k.size());
        double m = -1e300, l = 0;
        for (size_t j = 0; j < k.size(); ++j) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += double(q[size_t(h) * D + d]) * k[j][size_t(h / g) * D + d];
            m = std::max(m, s[j] = dot / std::sqrt(double(D)));
        }
        for (double& x : s) l += x = std::exp(x - m);
        for (int d = 0; d < D; ++d) {
            double acc = 0;
            for (size_t j = 0; j < k.size(); ++j) acc += s[j] * v[j][size_t(h / g) * D + d];
            o[size_t(h) * D + d] = float(acc / l);
        }
    }
}

}  // namespace

TEST_CASE("6b's timed-step oracle: the prefill's and the decode's o as plain loops over the same pages give them", "[oracle]") {
    // ragged lengths, pages no length fills, GQA g = 4, D = 64; the newcomer's prompt crosses pages
    const task6::timed::Step g{3, 8, 2, 64, 16, 1, 40, 37};
    const uint64_t seed = 1234;
    const task6::timed::Seeds s = task6::timed::seeds(seed);
    const size_t width = size_t(g.H_kv) * g.D, qw = size_t(g.H_q) * g.D;
    std::vector<float> k_pool = host_floats(filled_bf16(g.pool_elements(), s.k_pool)),
                       v_pool = host_floats(filled_bf16(g.pool_elements(), s.v_pool));
    const std::vector<float> q_prompt = host_floats(filled_bf16(g.prompt_q_elements(), s.q_prompt)),
                             k_prompt = host_floats(filled_bf16(g.prompt_kv_elements(), s.k_prompt)),
                             v_prompt = host_floats(filled_bf16(g.prompt_kv_elements(), s.v_prompt)),
                             q_step = host_floats(filled_bf16(g.step_q_elements(), s.q_step)),
                             k_step = host_floats(filled_bf16(g.step_kv_elements(), s.k_step)),
                             v_step = host_floats(filled_bf16(g.step_kv_elements(), s.v_step));
    const auto pages = task6::timed::pages(g, seed);
    auto row = [&](int b, int pos) { return size_t(pages[size_t(b)][size_t(pos / g.page_size)] * g.page_size + pos % g.page_size) * width; };
    // the pools as the step leaves them
    for (int p = 0; p < g.prompt; ++p)
        std::copy_n(&k_prompt[size_t(p) * width], width, &k_pool[row(g.B, p)]), std::copy_n(&v_prompt[size_t(p) * width], width, &v_pool[row(g.B, p)]);
    for (int b = 0; b < g.rows(); ++b)
        std::copy_n(&k_step[size_t(b) * width], width, &k_pool[row(b, g.length_after(b) - 1)]),
            std::copy_n(&v_step[size_t(b) * width], width, &v_pool[row(b, g.length_after(b) - 1)]);
    std::vector<float> want_prefill(g.prompt_q_elements()), want_decode(g.step_q_elements());
    for (int p = 0; p < g.prompt; ++p) {
        std::vector<const float*> k, v;
        for (int j = 0; j <= p; ++j) k.push_back(&k_prompt[size_t(j) * width]), v.push_back(&v_prompt[size_t(j) * width]);
        attend_row(&q_prompt[size_t(p) * qw], k, v, &want_prefill[size_t(p) * qw], g.H_q, g.H_kv, g.D);
    }
    for (int b = 0; b < g.rows(); ++b) {
        std::vector<const float*> k, v;
        for (int j = 0; j < g.length_after(b); ++j) k.push_back(&k_pool[row(b, j)]), v.push_back(&v_pool[row(b, j)]);
        attend_row(&q_step[size_t(b) * qw], k, v, &want_decode[size_t(b) * qw], g.H_q, g.H_kv, g.D);
    }
    auto sign_seed = [](int j) { return uint64_t(77 + j); };
    CublasGemm gemm;
    const std::vector<Digest> got = serve_step_oracle_digests(gemm, g, seed, sign_seed);
    REQUIRE(got.size() == 2);
    auto dp = device_floats(want_prefill), dd = device_floats(want_decode);
    CHECK(digest_relative_error(got[0], digest(dp.get(), want_prefill.size(), sign_seed(0))) < 1e-5);
    CHECK(digest_relative_error(got[1], digest(dd.get(), want_decode.size(), sign_seed(1))) < 1e-5);
    // and a wrong page would show: the decode's digest against a newcomer that never got its prompt
    std::vector<float> wrong = want_decode;
    wrong[size_t(g.B) * qw] += 0.5f;
    auto dw = device_floats(wrong);
    CHECK(digest_relative_error(got[1], digest(dw.get(), wrong.size(), sign_seed(1))) > 1e-3);
}
