// greedy_check.cpp — see greedy_check.h.
#include "common/llm/greedy_check.h"

#include <fmt/format.h>

#include <algorithm>
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

std::vector<int> ids_of(const attn::Tensor& t) {
    std::vector<int> ids(t.data.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(t.data[i]);
    return ids;
}

attn::Tensor step_of(const attn::Tensor& all, int step) {
    attn::Tensor t({all.shape[1], all.shape[2]});
    std::copy_n(all.ptr() + step * t.size(), t.size(), t.ptr());
    return t;
}

std::string step_name(int step, int S) {
    return step == 0 ? "prefill" : fmt::format("step {} (position {})", step, S + step - 1);
}

}  // namespace llm
