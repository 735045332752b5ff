// tensor.h — the one host tensor type of the harness: a shape and row-major float32 data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);                  // "[4, 10, 128]"
// "[b=1, s=3, d=5]" for flat index `flat` of `shape`; `names` labels the dimensions (may be empty).
std::string index_str(const Shape& shape, int64_t flat, const std::vector<std::string>& names = {});

struct Tensor {
    Shape shape;
    std::vector<float> data;

    Tensor() = default;
    explicit Tensor(Shape s, float fill = 0.0f) : shape(std::move(s)), data(size_t(numel(shape)), fill) {}
    int64_t size() const { return int64_t(data.size()); }
    float* ptr() { return data.data(); }
    const float* ptr() const { return data.data(); }
};

}  // namespace attn
