// diagnose_kernels.cpp — see diagnose_kernels.h: Task 2's GEMMs and softmax, their common mistakes in double precision.
#include "common/diagnose_kernels.h"

#include "common/diagnose.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

namespace attn {
namespace {

constexpr double kBudget = 5e7;  // multiply-adds a variant may cost (a failing case: about a second for all of them)

struct Named {
    std::string what;
    std::function<double(int64_t, int64_t, int64_t)> at;  // (batch, row, col) of the mistake's answer
};

// The first variant every checked element of `got` matches (as the check does: within the tolerance of that answer);
// else where the failing elements are against `right`.
// got is [batches (or more), all_rows, cols]; the first `rows` rows of the first `batches` batches are checked.
std::string name_or_locate(const Tensor& got, int64_t batches, int64_t rows, int64_t all_rows, int64_t cols,
                           const std::vector<Named>& variants,
                           const Named& right, Tolerance tol, const std::string& tried, const char* row_word,
                           const char* col_word) {
    const auto matches = [&](const Named& v) {
        bool all_zero = true;
        for (int64_t b = 0; b < batches; ++b)
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j) {
                    const double w = v.at(b, i, j);
                    all_zero = all_zero && w == 0.0;
                    if (!within(got.ptr()[(b * all_rows + i) * cols + j], w, tol)) return false;
                }
        return !all_zero;  // an answer of zeros names nothing (the comparison says "all zeros")
    };
    for (const Named& v : variants)
        if (matches(v)) return fmt::format("diagnosis: the output is {} — every element within the tolerance of that answer{}",
                                           v.what, tried);
    std::set<int64_t> bs, is, js;
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
                if (!within(got.ptr()[(b * all_rows + i) * cols + j], right.at(b, i, j), tol))
                    bs.insert(b), is.insert(i), js.insert(j);
    if (is.empty()) return "";
    std::vector<std::string> where;
    for (const std::string& w : {failing_only(is, rows, row_word), failing_only(js, cols, col_word),
                                 failing_only(bs, batches, "batches", false)})
        if (!w.empty()) where.push_back(w);
    return fmt::format("diagnosis: no common mistake matches; the failing elements are in {}{}",
                       where.empty() ? "every " + std::string(row_word) + " and " + col_word : fmt::format("{}", fmt::join(where, ", ")),
                       tried);
}

}  // namespace

std::string diagnose_gemm(const Tensor& got, const Tensor& a, const Tensor& b, bool nt, Tolerance tol) {
    const int64_t batch = a.shape[0], M = a.shape[1], K = a.shape[2], N = got.shape.back();
    if (batch == 0 || M == 0 || N == 0 || K == 0 || got.size() != batch * M * N) return "";
    if (is_constant(got.ptr(), got.size())) return "";
    // the first rows of the first batches, as many as the budget allows (said in the diagnosis)
    const int64_t batches = std::min<int64_t>(batch, 2);
    const int64_t rows = std::clamp<int64_t>(int64_t(kBudget / double(batches * N * K)), 1, M);
    const std::string tried = rows < M || batches < batch ? fmt::format(" (tried on the first {} rows of {} batch{})", rows,
                                                                         batches, batches == 1 ? "" : "es")
                                                          : "";
    const float *A = a.ptr(), *B = b.ptr();
    // B as given: [N, K] for A·Bᵀ, [K, N] for A·B; bt(b, n, k) is the element the right product reads
    const auto bt = [&](int64_t bb, int64_t n, int64_t k) { return nt ? B[(bb * N + n) * K + k] : B[(bb * K + k) * N + n]; };
    const auto dot = [&](int64_t bb, int64_t m, int64_t n, int64_t k_end, int64_t b_batch,
                         const std::function<double(int64_t, int64_t, int64_t)>& bv) {
        double s = 0;
        for (int64_t k = 0; k < k_end; ++k) s += double(A[(bb * M + m) * K + k]) * bv(b_batch, n, k);
        return s;
    };
    const Named right{"A·B", [&](int64_t bb, int64_t m, int64_t n) { return dot(bb, m, n, K, bb, bt); }};
    std::vector<Named> variants;
    // B read the other way round: the same memory taken as [K, N] where it is [N, K] (or the reverse)
    variants.push_back({nt ? "A·B with B's [N, K] memory read as [K, N]: B not transposed (A·B where A·Bᵀ was asked)"
                           : "A·Bᵀ with B's [K, N] memory read as [N, K]: B transposed where A·B was asked",
                        [&](int64_t bb, int64_t m, int64_t n) {
                            return dot(bb, m, n, K, bb, [&](int64_t b2, int64_t n2, int64_t k) {
                                return nt ? B[(b2 * N * K) + k * N + n2] : B[(b2 * N * K) + n2 * K + k];
                            });
                        }});
    for (int64_t t : {8, 16, 32, 64, 128})
        if (K % t != 0 && K > t)
            variants.push_back({fmt::format("the product with K cut to {} — the last partial tile of K = {} dropped (tiles of {})",
                                            K / t * t, K, t),
                                [&, t](int64_t bb, int64_t m, int64_t n) { return dot(bb, m, n, K / t * t, bb, bt); }});
    if (batches > 1)
        variants.push_back({"every batch multiplied by batch 0's B: the batch offset of B is missing",
                            [&](int64_t bb, int64_t m, int64_t n) { return dot(bb, m, n, K, 0, bt); }});
    return name_or_locate(got, batches, rows, M, N, variants, right, tol, tried, "rows", "columns");
}

std::string diagnose_softmax(const Tensor& got, const Tensor& x, Tolerance tol) {
    const int64_t cols = x.shape.back(), all_rows = cols ? x.size() / cols : 0;
    if (all_rows == 0 || got.size() != x.size()) return "";
    if (is_constant(got.ptr(), got.size())) return "";
    const int64_t rows = std::clamp<int64_t>(int64_t(kBudget / double(4 * cols)), 1, all_rows);
    const std::string tried = rows < all_rows ? fmt::format(" (tried on the first {} rows)", rows) : "";
    const float* X = x.ptr();
    // per row: max and sum of exp over columns [0, end)
    const auto stats = [&](int64_t i, int64_t end) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < end; ++j) m = std::max(m, double(X[i * cols + j]));
        for (int64_t j = 0; j < end; ++j) s += std::exp(double(X[i * cols + j]) - m);
        return std::pair{m, s};
    };
    std::vector<std::pair<double, double>> full(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) full[size_t(i)] = stats(i, cols);
    const Named right{"softmax", [&](int64_t, int64_t i, int64_t j) {
                          return std::exp(double(X[i * cols + j]) - full[size_t(i)].first) / full[size_t(i)].second;
                      }};
    std::vector<Named> variants;
    variants.push_back({"exp(x − max) without the division by the row's sum", [&](int64_t, int64_t i, int64_t j) {
                            return std::exp(double(X[i * cols + j]) - full[size_t(i)].first);
                        }});
    std::vector<std::vector<std::pair<double, double>>> cut;  // per block size: the stats over the whole blocks only
    for (int64_t t : {32, 64, 128, 256, 512, 1024})
        if (cols % t != 0 && cols > t) {
            std::vector<std::pair<double, double>> st(static_cast<size_t>(rows));
            for (int64_t i = 0; i < rows; ++i) st[size_t(i)] = stats(i, cols / t * t);
            cut.push_back(std::move(st));
            const size_t c = cut.size() - 1;
            variants.push_back({fmt::format("softmax with the row's max and sum taken over its first {} columns only — the "
                                            "last partial block of {} columns left out of the reduction",
                                            cols / t * t, t),
                                [&, c](int64_t, int64_t i, int64_t j) {
                                    return std::exp(double(X[i * cols + j]) - cut[c][size_t(i)].first) / cut[c][size_t(i)].second;
                                }});
        }
    if (rows == all_rows && all_rows > 1) {  // over the other axis: each column sums to 1
        std::vector<std::pair<double, double>> col(static_cast<size_t>(cols), {-INFINITY, 0.0});
        for (int64_t j = 0; j < cols; ++j) {
            for (int64_t i = 0; i < rows; ++i) col[size_t(j)].first = std::max(col[size_t(j)].first, double(X[i * cols + j]));
            for (int64_t i = 0; i < rows; ++i) col[size_t(j)].second += std::exp(double(X[i * cols + j]) - col[size_t(j)].first);
        }
        variants.push_back({"softmax over the wrong axis: each column sums to 1, not each row",
                            [col = std::move(col), X, cols](int64_t, int64_t i, int64_t j) {
                                return std::exp(double(X[i * cols + j]) - col[size_t(j)].first) / col[size_t(j)].second;
                            }});
    }
    return name_or_locate(got, 1, rows, all_rows, cols, variants, right, tol, tried, "rows", "columns");
}

}  // namespace attn
