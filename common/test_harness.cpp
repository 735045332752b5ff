// test_harness.cpp — unit tests of the harness itself: the safetensors reader on hand-made good
// and bad files, the comparison, the index formatting, the allocation tracker, a timed call's fingerprint verdict.
//   make unit
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/compare.h"
#include "common/cpu_ops.h"
#include "common/diagnose.h"
#include "common/diagnose_kernels.h"
#include "common/seed.h"
#include "common/cuda/bf16_tensor.h"
#include "common/cuda/digest.h"
#include "common/cuda/timed_calls.h"
#include "common/cuda/grid.cuh"
#include "common/todo.h"
#include "common/remote/launch_log.h"
#include "common/remote/wire.h"
#include "common/safetensors.h"
#include "task6_serve/timed_inputs.h"

using namespace attn;

namespace {

std::string temp_path(const std::string& name) { return "build/common/test_" + name + ".safetensors"; }

// Writes: 8-byte little-endian length, the header text, then `data` raw bytes.
std::string write_raw(const std::string& name, const std::string& header, const std::string& data,
                      long declared_len = -1) {
    const std::string path = temp_path(name);
    std::ofstream out(path, std::ios::binary);
    uint64_t len = declared_len >= 0 ? uint64_t(declared_len) : header.size();
    for (int i = 0; i < 8; ++i) out.put(char((len >> (8 * i)) & 0xff));
    out << header << data;
    return path;
}

std::string floats(std::vector<float> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

const std::string kGoodHeader =
    R"({"__metadata__":{"format_version":"1","atol":"1e-5"},"x":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";

std::string error_of(const std::string& path) {
    try {
        SafetensorsFile f(path, "run \"make goldens\"");
        f.load_f32("x", {2, 3});
    } catch (const GoldenError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("safetensors: a well-formed file loads", "[harness]") {
    const auto path = write_raw("good", kGoodHeader, floats({1, 2, 3, 4, 5, 6}));
    SafetensorsFile f(path);
    Tensor t = f.load_f32("x", {2, 3});
    CHECK(t.shape == Shape{2, 3});
    CHECK(t.data == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(f.metadata("atol") == "1e-5");
    CHECK(f.has("x"));
    CHECK_FALSE(f.has("y"));
}

TEST_CASE("safetensors: every bad file is one clear error naming file and problem", "[harness]") {
    struct Bad {
        const char* name;
        std::string path;
        const char* problem;
    };
    const std::vector<Bad> bad = {
        {"missing", temp_path("does_not_exist"), "file not found"},
        {"tiny", write_raw("tiny", "", "").substr(0), "header claims"},  // replaced below
        {"header_past_end", write_raw("header_past_end", kGoodHeader, "", 5000), "truncated: header claims 5000"},
        {"not_json", write_raw("not_json", "{not json", ""), "not valid JSON"},
        {"data_truncated", write_raw("data_truncated", kGoodHeader, floats({1, 2, 3})), "truncated or corrupted"},
        {"bad_dtype",
         write_raw("bad_dtype", R"({"x":{"dtype":"Q7","shape":[2,3],"data_offsets":[0,24]}})", floats({1, 2, 3, 4, 5, 6})),
         "unknown dtype 'Q7'"},
        {"wrong_dtype",
         write_raw("wrong_dtype", R"({"x":{"dtype":"I32","shape":[2,3],"data_offsets":[0,24]}})", floats({1, 2, 3, 4, 5, 6})),
         "dtype I32, expected F32"},
        {"wrong_shape",
         write_raw("wrong_shape", R"({"x":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]}})", floats({1, 2, 3, 4, 5, 6})),
         "shape [3, 2], expected [2, 3]"},
        {"size_mismatch",
         write_raw("size_mismatch", R"({"x":{"dtype":"F32","shape":[2,2],"data_offsets":[0,24]}})", floats({1, 2, 3, 4, 5, 6})),
         "needs 16 bytes"},
        {"missing_tensor", write_raw("missing_tensor", R"({"y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({1})),
         "no tensor named 'x'"},
        {"bad_entry", write_raw("bad_entry", R"({"x":{"dtype":"F32","shape":"2x3"}})", ""), "malformed"},
        {"huge_header", write_raw("huge_header", "{}", "", long(1) << 40), "exceeds the 100 MB limit"},
    };
    for (const Bad& b : bad) {
        if (std::string(b.name) == "tiny") {
            std::ofstream(temp_path("tiny"), std::ios::binary) << "abc";
            const std::string msg = error_of(temp_path("tiny"));
            INFO(msg);
            CHECK(msg.find("too short") != std::string::npos);
            continue;
        }
        const std::string msg = error_of(b.path);
        INFO(b.name << ": " << msg);
        CHECK(msg.find(b.path) == 0);                                  // names the file first
        CHECK(msg.find(b.problem) != std::string::npos);                // says what is wrong
        CHECK(msg.find("run \"make goldens\"") != std::string::npos);  // and what to do
        CHECK(msg.find('\n') == std::string::npos);                     // on one line
    }
}

TEST_CASE("compare: tolerance, NaN, zeros, constants, indices", "[harness]") {
    Tensor want({2, 3});
    for (int i = 0; i < 6; ++i) want.data[i] = 0.1f * float(i + 1);
    const Tolerance tol{1e-5, 1e-4};

    SECTION("equal passes and uses no tolerance") {
        auto r = compare(want.ptr(), want, tol);
        CHECK(r.passed);
        CHECK(r.tol_share == 0.0);
    }
    SECTION("one element off names its index and the numbers") {
        Tensor got = want;
        got.data[4] += 0.01f;
        auto r = compare(got.ptr(), want, tol, {"s", "d"});
        CHECK_FALSE(r.passed);
        CHECK(r.mismatches == 1);
        CHECK(r.detail.find("[s=1,d=1]") != std::string::npos);
        CHECK(r.reason.find("1 of 6 elements") != std::string::npos);
        CHECK(r.max_abs == Approx(0.01).epsilon(1e-3));
    }
    SECTION("an error inside the tolerance passes, and its share is reported") {
        Tensor got = want;
        got.data[0] += 5e-6f;
        auto r = compare(got.ptr(), want, tol);
        CHECK(r.passed);
        CHECK(r.tol_share > 0.1);
        CHECK(r.tol_share < 1.0);
    }
    SECTION("NaN fails even among correct values") {
        Tensor got = want;
        got.data[5] = std::numeric_limits<float>::quiet_NaN();
        auto r = compare(got.ptr(), want, tol, {"s", "d"});
        CHECK_FALSE(r.passed);
        CHECK(r.nonfinite == 1);
        CHECK(r.reason.find("NaN/Inf, first at [s=1,d=2]") != std::string::npos);
    }
    SECTION("all zeros fail, even with a tolerance that would allow them") {
        Tensor zeros({2, 3});
        auto r = compare(zeros.ptr(), want, Tolerance{1.0, 0.0});
        CHECK_FALSE(r.passed);
        CHECK(r.reason == "output is all zeros");
    }
    SECTION("a constant output fails where the expected one varies") {
        Tensor c({2, 3}, 0.35f);
        auto r = compare(c.ptr(), want, Tolerance{1.0, 0.0});
        CHECK_FALSE(r.passed);
        CHECK(r.reason.find("constant") != std::string::npos);
    }
    SECTION("a constant expected output may be matched by a constant") {
        Tensor flat({2, 3}, 0.5f);
        CHECK(compare(flat.ptr(), flat, tol).passed);
    }
}

TEST_CASE("compare: the NaN of a stub kernel (ATTNLAB_KERNEL_TODO) names its step, and still fails", "[harness]") {
    Tensor want({2, 3});
    for (int i = 0; i < 6; ++i) want.data[i] = 0.1f * float(i + 1);
    const Tolerance tol{1e-5, 1e-4};
    auto stub_nan = [](int task, int step) {
        const uint32_t bits = ATTNLAB_KERNEL_TODO_BITS(task, step);
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    };
    CHECK(std::isnan(stub_nan(2, 1)));
    CHECK(kernel_todo_step(ATTNLAB_KERNEL_TODO_BITS(2, 1)) == "task2.1");
    CHECK(kernel_todo_step(ATTNLAB_KERNEL_TODO_BITS(5, 12)) == "task5.12");
    uint32_t poison_bits;
    const float poison_nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(&poison_bits, &poison_nan, sizeof poison_bits);
    CHECK(kernel_todo_step(poison_bits).empty());  // the harness's own poison is not a stub's NaN

    SECTION("a stub's output (element 0 tagged, the rest the poison) is 'task2.1 not implemented'") {
        Tensor got({2, 3}, poison_nan);
        got.data[0] = stub_nan(2, 1);
        auto r = compare(got.ptr(), want, tol, {"s", "d"});
        CHECK_FALSE(r.passed);
        CHECK(r.todo_step == "task2.1");
        CHECK(r.reason == "task2.1 not implemented (the kernel is still the skeleton's stub)");
        CaseResult cr;
        CHECK_FALSE(check_output(cr, "softmax", got, want, tol));
        CHECK(cr.status == "failed");
        CHECK(cr.reason == "task2.1 not implemented (the kernel is still the skeleton's stub)");
    }
    SECTION("the tag never makes an otherwise correct output pass") {
        Tensor got = want;
        got.data[0] = stub_nan(2, 2);
        auto r = compare(got.ptr(), want, Tolerance{1.0, 1.0});
        CHECK_FALSE(r.passed);
        CHECK(r.reason.find("task2.2 not implemented") == 0);
    }
    SECTION("the tag elsewhere than element 0, or a plain NaN in element 0, is an ordinary NaN failure") {
        Tensor got = want;
        got.data[3] = stub_nan(2, 1);
        auto r = compare(got.ptr(), want, tol, {"s", "d"});
        CHECK_FALSE(r.passed);
        CHECK(r.todo_step.empty());
        CHECK(r.reason.find("NaN/Inf, first at [s=1,d=0]") != std::string::npos);
        Tensor got2 = want;
        got2.data[0] = poison_nan;
        auto r2 = compare(got2.ptr(), want, tol, {"s", "d"});
        CHECK_FALSE(r2.passed);
        CHECK(r2.todo_step.empty());
        CHECK(r2.reason.find("NaN/Inf, first at [s=0,d=0]") != std::string::npos);
    }
}

TEST_CASE("index_str and shape_str", "[harness]") {
    CHECK(shape_str({4, 10, 128}) == "[4, 10, 128]");
    CHECK(index_str({2, 3, 4}, 23, {"b", "s", "d"}) == "[b=1,s=2,d=3]");
    CHECK(index_str({2, 3, 4}, 5) == "[0,1,1]");
}

// The channel between the trusted side and a runner: whatever a runner writes is at worst an error.
TEST_CASE("wire: a message survives the pipe; garbage, oversize and silence are errors", "[harness]") {
    using namespace attn::remote;
    auto pipe_with = [](const std::string& bytes) {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        REQUIRE(write(fds[1], bytes.data(), bytes.size()) == ssize_t(bytes.size()));
        close(fds[1]);
        return fds[0];
    };
    const auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(2); };
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    Message m;
    m.head = {{"op", "x"}, {"args", {{"n", 3}}}};
    m.buffers = {{1.f, 2.f, 3.f}, {}};
    write_message(fds[1], m);
    const Message back = read_message(fds[0], soon());
    CHECK(back.head.at("args").at("n") == 3);
    REQUIRE(back.buffers.size() == 2);
    CHECK(back.buffers[0] == std::vector<float>{1.f, 2.f, 3.f});
    CHECK(back.buffers[1].empty());
    write_message(fds[1], m);  // more floats than the reader allows
    CHECK_THROWS_AS(read_message(fds[0], soon(), ReadLimits{1 << 20, 64, 2}), WireError);
    close(fds[0]), close(fds[1]);

    int fd = pipe_with("R 0 {\"status\":\"passed\"}\n");  // a forged result line of the old grader
    CHECK_THROWS_WITH(read_message(fd, soon()), Catch::Contains("bad magic"));
    close(fd);
    std::string huge = "ATNL";
    const uint64_t len = uint64_t(1) << 40;
    huge.append(reinterpret_cast<const char*>(&len), sizeof len);
    fd = pipe_with(huge);
    CHECK_THROWS_WITH(read_message(fd, soon()), Catch::Contains("head too large"));
    close(fd);
    REQUIRE(pipe(fds) == 0);  // nothing ever arrives
    CHECK_THROWS_WITH(read_message(fds[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(200)),
                      Catch::Contains("timed out"));
    close(fds[0]), close(fds[1]);
    CHECK(sanitize("a|b\n`c`\x01" "d") == "a'b 'c'd");
}

TEST_CASE("digest: a timed call's error in tolerances, from its projections", "[harness]") {
    // want: n elements, Σ|w| = 0 and Σw² = 0, so the tolerance summed over them is √n·atol; every projection of
    // got differs from want's by d, so the estimated error norm is d.
    const size_t n = 1 << 20;
    const Tolerance tol{2e-5, 1e-4};
    Digest want, got;
    const double norm_tol = std::sqrt(double(n)) * tol.atol;
    for (double share : {0.0, 0.01, 0.049, 0.051, 0.5, 3.0}) {
        for (int k = 0; k < kProjections; ++k) got.proj[k] = want.proj[k] + (k % 2 ? share : -share) * norm_tol;
        CHECK(digest_error_ratio(got, want, n, tol) == Approx(share).margin(1e-12));
        CHECK(digests_agree(got, want, n, tol) == (share <= kTimedErrorAllowance));
    }
    // rtol counts through want's Σ|w| and Σw²: Σ (atol + rtol·|w|)² = n·atol² + 2·atol·rtol·Σ|w| + rtol²·Σw²
    want.sumabs = 3.0 * n, want.sumsq = 10.0 * n;
    const double tol2 = n * (tol.atol * tol.atol + 2 * tol.atol * tol.rtol * 3.0 + tol.rtol * tol.rtol * 10.0);
    for (int k = 0; k < kProjections; ++k) got.proj[k] = want.proj[k] + std::sqrt(tol2);
    CHECK(digest_error_ratio(got, want, n, tol) == Approx(1.0));
    got.nonfinite = 1;
    for (int k = 0; k < kProjections; ++k) got.proj[k] = want.proj[k];
    CHECK_FALSE(digests_agree(got, want, n, tol));  // a NaN anywhere fails, whatever the projections say
}

TEST_CASE("relative_l2_error: ‖got − want‖ / ‖want‖, and the plain norm where want is zero", "[harness]") {
    Tensor want({4}), got({4});
    want.data = {3, 0, 4, 0}, got.data = {3, 1, 4, 0};  // ‖e‖ = 1, ‖want‖ = 5
    CHECK(relative_l2_error(got, want) == Approx(0.2));
    CHECK(relative_l2_error(want, want) == 0.0);
    CHECK(relative_l2_error(got, Tensor({4})) == Approx(std::sqrt(26.0)));
}

TEST_CASE("digest: a timed call's relative L2 error, and each output's own signs", "[harness]") {
    // ‖want‖² = Σw² = 4; every projection of got differs by 0.02: the estimated ‖e‖ is 0.02, relative 0.01
    Digest want, got;
    want.sumsq = 4.0;
    for (int k = 0; k < kProjections; ++k) got.proj[k] = want.proj[k] + (k % 3 ? 0.02 : -0.02);
    CHECK(digest_relative_error(got, want) == Approx(0.01));
    CHECK(digest_relative_error(want, want) == 0.0);
    want.sumsq = 0;  // a zero answer: any error is infinitely wrong, none is right
    CHECK(std::isinf(digest_relative_error(got, want)));
    CHECK(digest_relative_error(want, want) == 0.0);
    // output 0 keeps the single-output seed; the others differ from it and from each other, and from the next call's
    CHECK(timed_sign_seed(100, 2) == timed_sign_seed(100, 2, 0));
    CHECK(timed_sign_seed(100, 2, 1) != timed_sign_seed(100, 2, 0));
    CHECK(timed_sign_seed(100, 2, 1) != timed_sign_seed(100, 2, 2));
    CHECK(timed_sign_seed(100, 2, 1) != timed_sign_seed(100, 3, 1));
}

TEST_CASE("6b's timed step: every page of the pool held by one sequence, each as many as its length needs", "[harness]") {
    const task6::timed::Step g{5, 8, 2, 64, 16, 1, 100, 33};  // lengths after the step: 2, 26, 51, 76, 101; the newcomer 34
    CHECK(g.length_after(0) == 2);
    CHECK(g.length_after(4) == 101);
    CHECK(g.length_after(5) == 34);
    const auto pages = task6::timed::pages(g, 7);
    REQUIRE(int(pages.size()) == g.rows());
    std::vector<int> seen;
    for (int b = 0; b < g.rows(); ++b) {
        CHECK(int(pages[size_t(b)].size()) * g.page_size >= g.length_after(b));
        CHECK((int(pages[size_t(b)].size()) - 1) * g.page_size < g.length_after(b));
        seen.insert(seen.end(), pages[size_t(b)].begin(), pages[size_t(b)].end());
    }
    std::sort(seen.begin(), seen.end());
    for (int p = 0; p < g.num_pages(); ++p) CHECK(seen[size_t(p)] == p);
    CHECK(pages != task6::timed::pages(g, 11));  // shuffled afresh by each call's nonce
    const task6::timed::Seeds a = task6::timed::seeds(100), b = task6::timed::seeds(104);  // calls i and i + 1
    for (uint64_t x : {a.k_pool, a.v_pool, a.q_prompt, a.k_prompt, a.v_prompt, a.q_step, a.k_step, a.v_step})
        for (uint64_t y : {b.k_pool, b.v_pool, b.q_prompt, b.k_prompt, b.v_prompt, b.q_step, b.k_step, b.v_step, uint64_t(103), uint64_t(107)})
            CHECK(x != y);  // no input of one call shares a seed with the next's, nor with a fingerprint's signs (s + 3)
}

TEST_CASE("diagnose: a wrong attention output is named by the mistake it matches, or located", "[harness]") {
    auto g = attn::rng_for("test.diagnose");
    const attn::Tensor q = attn::random_tensor(g, {2, 3, 37, 16}), k = attn::random_tensor(g, {2, 3, 53, 16}),
                       v = attn::random_tensor(g, {2, 3, 53, 16});
    const attn::Tolerance tol{2e-5, 1e-4};
    const attn::Tensor right = attn::attention_f64(q, k, v, true);
    using Catch::Matchers::Contains;
    // causal asked, none applied
    CHECK_THAT(attn::diagnose_attention(attn::attention_f64(q, k, v, false), q, k, v, true, tol),
               Contains("the output is attention without the causal mask"));
    // Sq ≠ Sk: the first 37 keys of each head, for the mask aligned top-left below
    attn::Tensor k_sq({2, 3, 37, 16}), v_sq(k_sq.shape);
    for (int64_t bh = 0; bh < 6; ++bh)
        for (int64_t e = 0; e < 37 * 16; ++e)
            k_sq.data[size_t(bh * 37 * 16 + e)] = k.data[size_t(bh * 53 * 16 + e)],
            v_sq.data[size_t(bh * 37 * 16 + e)] = v.data[size_t(bh * 53 * 16 + e)];
    // with the mask aligned top-left (j ≤ i), the rows see only the first 37 keys: attention over them, square and causal
    CHECK_THAT(attn::diagnose_attention(attn::attention_f64(q, k_sq, v_sq, true), q, k, v, true, tol),
               Contains("the causal mask aligned top-left"));
    // two heads swapped: each output head is another's right answer
    attn::Tensor swapped = right;
    const size_t head = 37 * 16;
    std::copy_n(right.data.begin() + long(head), head, swapped.data.begin());
    std::copy_n(right.data.begin(), head, swapped.data.begin() + long(head));
    CHECK_THAT(attn::diagnose_attention(swapped, q, k, v, true, tol), Contains("head 0 holds head 1's"));
    // a small error everywhere: precision, not logic
    attn::Tensor close = right;
    for (float& x : close.data) x *= 1.0f + 5e-4f;
    CHECK_THAT(attn::diagnose_attention(close, q, k, v, true, tol), Contains("a loss of precision"));
    // one wrong row: located
    attn::Tensor one_row = right;
    for (int64_t d = 0; d < 16; ++d) one_row.data[size_t(20 * 16 + d)] += 1.0f;
    CHECK_THAT(attn::diagnose_attention(one_row, q, k, v, true, tol), Contains("query rows 20 only") && Contains("heads 0 only"));
    // all zeros: the comparison says "output is all zeros"; no mistake whose answer is zeros at this size (S = 10 < every
    // tile: dropping the keys past the last whole tile drops them all) is named instead
    const attn::Tensor q10 = attn::random_tensor(g, {1, 2, 10, 16}), k10 = attn::random_tensor(g, {1, 2, 10, 16}),
                       v10 = attn::random_tensor(g, {1, 2, 10, 16});
    CHECK(attn::diagnose_attention(attn::Tensor({1, 2, 10, 16}), q10, k10, v10, true, tol).empty());
}

TEST_CASE("diagnose: a wrong GEMM or softmax is named by the mistake it matches, or located", "[harness]") {
    using Catch::Matchers::Contains;
    auto g = attn::rng_for("test.diagnose_kernels");
    const int64_t batch = 2, M = 5, N = 7, K = 40;
    const attn::Tensor a = attn::random_tensor(g, {batch, M, K}), b = attn::random_tensor(g, {batch, N, K});  // A·Bᵀ
    const attn::Tolerance tol{1e-4, 1e-4};
    // the answer of A·Bᵀ with the sum over k < k_end and batch bb's B taken from b_batch; `plain`: B read as [K, N]
    const auto product = [&](int64_t k_end, bool batch0, bool plain) {
        attn::Tensor c({batch, M, N});
        for (int64_t bb = 0; bb < batch; ++bb)
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < N; ++n) {
                    double s = 0;
                    const int64_t b2 = batch0 ? 0 : bb;
                    for (int64_t k = 0; k < k_end; ++k)
                        s += double(a.data[size_t((bb * M + m) * K + k)]) *
                             b.data[size_t(plain ? b2 * N * K + k * N + n : (b2 * N + n) * K + k)];
                    c.data[size_t((bb * M + m) * N + n)] = float(s);
                }
        return c;
    };
    CHECK_THAT(attn::diagnose_gemm(product(K, false, true), a, b, true, tol), Contains("B not transposed"));
    CHECK_THAT(attn::diagnose_gemm(product(32, false, false), a, b, true, tol), Contains("K cut to 32"));
    CHECK_THAT(attn::diagnose_gemm(product(K, true, false), a, b, true, tol), Contains("the batch offset of B is missing"));
    attn::Tensor one = product(K, false, false);
    one.data[size_t((1 * M + 3) * N + 6)] += 1.0f;
    CHECK_THAT(attn::diagnose_gemm(one, a, b, true, tol), Contains("rows 3 only") && Contains("columns 6 only") &&
                                                                  Contains("batches 1 only"));
    // softmax over 3 rows of 100 columns
    const attn::Tensor x = attn::random_tensor(g, {3, 100});
    const auto soft = [&](int64_t end, bool divide, bool by_column) {
        attn::Tensor y({3, 100});
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 100; ++j) {
                double m = -INFINITY, s = 0;
                for (int64_t t = 0; t < (by_column ? 3 : end); ++t) m = std::max(m, double(x.data[size_t(by_column ? t * 100 + j : i * 100 + t)]));
                for (int64_t t = 0; t < (by_column ? 3 : end); ++t) s += std::exp(double(x.data[size_t(by_column ? t * 100 + j : i * 100 + t)]) - m);
                y.data[size_t(i * 100 + j)] = float(std::exp(double(x.data[size_t(i * 100 + j)]) - m) / (divide ? s : 1.0));
            }
        return y;
    };
    CHECK_THAT(attn::diagnose_softmax(soft(100, false, false), x, tol), Contains("without the division by the row's sum"));
    CHECK_THAT(attn::diagnose_softmax(soft(96, true, false), x, tol), Contains("first 96 columns only"));
    CHECK_THAT(attn::diagnose_softmax(soft(100, true, true), x, tol), Contains("over the wrong axis"));
    attn::Tensor off = soft(100, true, false);
    off.data[size_t(2 * 100 + 99)] = 0.5f;
    CHECK_THAT(attn::diagnose_softmax(off, x, tol), Contains("no common mistake matches") && Contains("rows 2 only"));
    CHECK(attn::diagnose_softmax(attn::Tensor({3, 100}), x, tol).empty());  // zeros: the comparison's words
}

TEST_CASE("grid_over_heads: B·H spread over y and z, the same grid up to 65535 heads", "[harness]") {
    const auto yz = [](long long heads) {
        const dim3 g = attn::grid_over_heads(7, heads);
        CHECK(g.x == 7u);
        return std::pair<unsigned, unsigned>{g.y, g.z};
    };
    CHECK(yz(1) == std::pair<unsigned, unsigned>{1, 1});
    CHECK(yz(0) == std::pair<unsigned, unsigned>{1, 1});
    CHECK(yz(65535) == std::pair<unsigned, unsigned>{65535, 1});
    CHECK(yz(65536) == std::pair<unsigned, unsigned>{65535, 2});
    CHECK(yz(70000) == std::pair<unsigned, unsigned>{65535, 2});  // 131070 blocks: 61070 return at once
}

TEST_CASE("launch log: the page cannot shrink, and whatever the runner writes is told in bounded, printable words", "[harness]") {
    namespace ll = attn::remote::launch_log;
    const int fd = ll::create_page();
    REQUIRE(fd >= 0);
    CHECK(ftruncate(fd, 0) != 0);  // sealed: a runner that shrinks it would make this process's reads fault
    CHECK(ftruncate(fd, 1 << 20) != 0);

    ll::Page page{};
    page.magic = ll::kMagic;
    CHECK(ll::describe(page).empty());  // no student call ran with the log on: nothing to say
    page.watched = 1;
    CHECK(ll::describe(page).find("no kernel") != std::string::npos);  // a hang on the CPU
    CHECK(ll::describe(page, false).empty());                          // a CUDA error before any launch: nothing to add

    page.count = 1, page.sm_count = 132;
    ll::Launch& one = page.latest[0];
    std::snprintf(one.name, sizeof one.name, "flash_forward(float const*)");
    one.grid[0] = one.grid[1] = one.grid[2] = 1;
    one.block[0] = 32, one.block[1] = one.block[2] = 1;
    one.regs = 40, one.blocks_per_sm = 16, one.static_smem = 12288;
    const std::string told = ll::describe(page);
    INFO(told);
    CHECK(told.find("1 block of 32×1×1 = 32 threads") != std::string::npos);
    CHECK(told.find("1 block for 132 SMs: 131 SMs had nothing to do (each SM could hold 16 such blocks") != std::string::npos);
    CHECK(told.find("12.0 KB shared memory") != std::string::npos);

    page.count = 2;  // a second kernel: both listed, each once
    page.latest[1] = one;
    std::snprintf(page.latest[1].name, sizeof page.latest[1].name, "combine(float*)");
    const std::string listed = ll::list(page);
    INFO(listed);
    CHECK(listed.rfind("2 launches: `flash_forward(float const*)`: grid", 0) == 0);
    CHECK(listed.find("; `combine(float*)`: grid") != std::string::npos);

    // A runner that writes garbage everywhere: no NUL, huge numbers; the words stay printable and short.
    std::memset(static_cast<void*>(&page), 0xC3, sizeof page);
    page.magic = ll::kMagic, page.unavailable[0] = 0;
    const std::string garbage = ll::describe(page);
    CHECK(garbage.size() < 1200);
    for (char c : garbage) CHECK((c >= 32 || c < 0));  // printable ASCII or the report's own UTF-8 (×, —, …)
    CHECK(garbage.find("\xC3\xC3") == std::string::npos);  // none of the runner's raw bytes
    page.watched = 1;
    const std::string garbage_list = ll::list(page);
    CHECK(garbage_list.size() < 2400);
    CHECK(garbage_list.find("\xC3\xC3") == std::string::npos);

    page.magic = 0;
    CHECK(ll::describe(page).empty());  // not a page at all
}
