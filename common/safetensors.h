// safetensors.h — a validating reader for the safetensors format (goldens, later model weights).
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data block. Every problem — missing file, truncated header or data, bad JSON, unknown
// dtype, offsets outside the file, wrong dtype or shape for what the caller expects — throws
// GoldenError with one line naming the file and the problem (plus a hint when one is given).
#pragma once
#include <map>
#include <stdexcept>
#include <string>

#include "tensor.h"

namespace attn {

struct GoldenError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class SafetensorsFile {
public:
    // `hint` is appended to every error, e.g. `run "make goldens"`.
    explicit SafetensorsFile(std::string path, std::string hint = "");

    bool has(const std::string& name) const { return entries_.count(name) != 0; }
    Shape shape(const std::string& name) const;
    std::string dtype(const std::string& name) const;
    // Loads a float32 tensor; `expected` (if non-empty) must match its shape exactly.
    Tensor load_f32(const std::string& name, const Shape& expected = {}) const;
    // A value of the __metadata__ block; throws if absent.
    std::string metadata(const std::string& key) const;
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    const std::string& path() const { return path_; }

private:
    struct Entry {
        std::string dtype;
        Shape shape;
        uint64_t begin = 0, end = 0;
    };
    [[noreturn]] void fail(const std::string& problem) const;
    const Entry& entry(const std::string& name) const;

    std::string path_, hint_;
    uint64_t data_start_ = 0;
    std::map<std::string, Entry> entries_;
    std::map<std::string, std::string> metadata_;
};

}  // namespace attn
