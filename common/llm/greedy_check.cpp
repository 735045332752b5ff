// greedy_check.cpp — see greedy_check.h.
#include "common/llm/greedy_check.h"

#include <fmt/format.h>

#include <cmath>

#include "common/check.h"

namespace llm {

bool check_step(attn::CaseResult& r, const std::string& step, const attn::Tensor& got, const attn::Tensor& want,
                const std::vector<int>& ours, const std::vector<int>& theirs, attn::Tolerance tol) {
    if (!attn::check_output(r, step + " logits", got, want, tol, {"b", "vocab"})) return false;
    const int64_t V = want.shape[1];
    for (size_t b = 0; b < theirs.size(); ++b) {
        if (ours[b] == theirs[b]) continue;
        const double mine = want.ptr()[int64_t(b) * V + ours[b]], best = want.ptr()[int64_t(b) * V + theirs[b]];
        if (best - mine <= tol.atol + tol.rtol * std::fabs(best)) continue;  // a tie within float32 noise
        r.status = "failed";
        r.reason = fmt::format("{}: sequence {} chose token {}, the reference {} (logit {:.4f} vs {:.4f})", step, b, ours[b],
                               theirs[b], mine, best);
        return false;
    }
    return true;
}

std::vector<int> column(const std::vector<int>& rows, int B, int cols, int c) {
    std::vector<int> out(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) out[size_t(b)] = rows[size_t(b) * cols + c];
    return out;
}

std::string printable(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = n > 0 && i + n <= s.size();
        for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
        if (ok) {
            out.append(s, i, n);
            i += n;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

}  // namespace llm
