// tensor.cpp — shape helpers for Tensor.
#include "tensor.h"

#include <fmt/format.h>

namespace attn {

int64_t numel(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string index_str(const Shape& shape, int64_t flat, const std::vector<std::string>& names) {
    std::vector<int64_t> idx(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
        idx[i] = shape[i] ? flat % shape[i] : 0;
        flat = shape[i] ? flat / shape[i] : 0;
    }
    std::string out = "[";
    for (size_t i = 0; i < idx.size(); ++i) {
        if (i) out += ",";
        if (i < names.size()) out += names[i] + "=";
        out += std::to_string(idx[i]);
    }
    return out + "]";
}

}  // namespace attn
