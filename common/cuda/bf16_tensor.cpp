// bf16_tensor.cpp — see bf16_tensor.h.
#include "common/cuda/bf16_tensor.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/check.h"

namespace attn {

uint16_t bf16_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float bf16_value(uint16_t b) {
    const uint32_t u = uint32_t(b) << 16;
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
void round_to_bf16(Tensor& t) {
    for (float& x : t.data) x = bf16_value(bf16_bits(x));
}

void Bf16Buffer::upload(const Tensor& t) {
    std::vector<uint16_t> b(words.size() * 2, 0);
    for (size_t i = 0; i < n; ++i) b[i] = bf16_bits(t.data[i]);
    std::vector<float> w(words.size());
    std::memcpy(w.data(), b.data(), w.size() * 4);
    words.upload(w);
}
void Bf16Buffer::poison() {
    std::vector<float> w(words.size());
    std::memset(w.data(), 0xFF, w.size() * 4);
    words.upload(w);
}
Tensor Bf16Buffer::download(const Shape& shape) const {
    const std::vector<float> w = words.download();
    std::vector<uint16_t> b(w.size() * 2);
    std::memcpy(b.data(), w.data(), w.size() * 4);
    Tensor t(shape);
    for (size_t i = 0; i < n; ++i) t.data[i] = bf16_value(b[i]);
    return t;
}

bool bf16_input_unchanged(CaseResult& r, const std::string& name, const Tensor& original, const Bf16Buffer& d) {
    return inputs_unchanged(r, name, original, d.download(original.shape));
}

double relative_l2_error(const Tensor& got, const Tensor& want) {
    double e2 = 0, w2 = 0;
    for (size_t i = 0; i < got.data.size(); ++i)
        e2 += double(got.data[i] - want.data[i]) * (got.data[i] - want.data[i]), w2 += double(want.data[i]) * want.data[i];
    return w2 > 0 ? std::sqrt(e2 / w2) : std::sqrt(e2);
}

bool relative_l2_within(CaseResult& r, const std::string& what, const Tensor& got, const Tensor& want, double bound,
                        const std::string& hint, const std::string& metric) {
    const double rel = relative_l2_error(got, want);
    r.metrics[metric] = rel;
    if (rel <= bound) return true;  // NaN fails here
    r.status = "failed";
    r.reason = fmt::format("{}: relative L2 error {:.2e} > {:.0e} (every element is inside its bound, but the whole is "
                           "off: {})", what, rel, bound, hint);
    return false;
}

}  // namespace attn
