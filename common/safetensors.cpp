// safetensors.cpp — see safetensors.h.
#include "safetensors.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace attn {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit (100 MB)

uint64_t dtype_bytes(const std::string& dtype) {
    static const std::map<std::string, uint64_t> sizes = {
        {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
        {"I16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"U16", 2}, {"U32", 4}, {"U64", 8}};
    auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

}  // namespace

void SafetensorsFile::fail(const std::string& problem) const {
    throw GoldenError(fmt::format("{}: {}{}", path_, problem, hint_.empty() ? "" : " — " + hint_));
}

SafetensorsFile::SafetensorsFile(std::string path, std::string hint) : path_(std::move(path)), hint_(std::move(hint)) {
    std::ifstream in(path_, std::ios::binary | std::ios::ate);
    if (!in) fail("file not found or unreadable");
    const uint64_t file_size = uint64_t(in.tellg());
    in.seekg(0);
    if (file_size < 8) fail(fmt::format("truncated: {} bytes, too short for the 8-byte header length", file_size));

    unsigned char len_bytes[8];
    in.read(reinterpret_cast<char*>(len_bytes), 8);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
    if (header_len > kMaxHeaderBytes) fail(fmt::format("corrupted: header length {} exceeds the 100 MB limit", header_len));
    if (header_len > file_size - 8)
        fail(fmt::format("truncated: header claims {} bytes but only {} follow", header_len, file_size - 8));

    std::string header(header_len, '\0');
    in.read(header.data(), std::streamsize(header_len));
    data_start_ = 8 + header_len;
    const uint64_t data_size = file_size - data_start_;

    nlohmann::json j;
    try {
        j = nlohmann::json::parse(header);
    } catch (const nlohmann::json::exception& e) {
        fail(fmt::format("corrupted: header is not valid JSON ({})", e.what()));
    }
    if (!j.is_object()) fail("corrupted: header is not a JSON object");

    for (auto& [name, value] : j.items()) {
        if (name == "__metadata__") {
            if (!value.is_object()) fail("corrupted: __metadata__ is not an object");
            for (auto& [k, v] : value.items()) {
                if (!v.is_string()) fail(fmt::format("corrupted: metadata '{}' is not a string", k));
                metadata_[k] = v.get<std::string>();
            }
            continue;
        }
        try {
            Entry e;
            e.dtype = value.at("dtype").get<std::string>();
            e.shape = value.at("shape").get<Shape>();
            auto offsets = value.at("data_offsets").get<std::vector<uint64_t>>();
            if (offsets.size() != 2) fail(fmt::format("corrupted: tensor '{}' needs two data_offsets", name));
            e.begin = offsets[0];
            e.end = offsets[1];
            const uint64_t elem = dtype_bytes(e.dtype);
            if (elem == 0) fail(fmt::format("tensor '{}' has unknown dtype '{}'", name, e.dtype));
            for (int64_t d : e.shape)
                if (d < 0) fail(fmt::format("corrupted: tensor '{}' has a negative dimension", name));
            if (e.begin > e.end || e.end > data_size)
                fail(fmt::format("truncated or corrupted: tensor '{}' spans bytes [{}, {}) but the data block has {}", name,
                                 e.begin, e.end, data_size));
            if (e.end - e.begin != uint64_t(numel(e.shape)) * elem)
                fail(fmt::format("corrupted: tensor '{}' {} {} needs {} bytes, its offsets give {}", name, e.dtype,
                                 shape_str(e.shape), uint64_t(numel(e.shape)) * elem, e.end - e.begin));
            entries_[name] = e;
        } catch (const nlohmann::json::exception& ex) {
            fail(fmt::format("corrupted: entry '{}' is malformed ({})", name, ex.what()));
        }
    }
}

const SafetensorsFile::Entry& SafetensorsFile::entry(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) fail(fmt::format("no tensor named '{}'", name));
    return it->second;
}

Shape SafetensorsFile::shape(const std::string& name) const { return entry(name).shape; }
std::string SafetensorsFile::dtype(const std::string& name) const { return entry(name).dtype; }

Tensor SafetensorsFile::load_f32(const std::string& name, const Shape& expected) const {
    const Entry& e = entry(name);
    if (e.dtype != "F32") fail(fmt::format("tensor '{}' has dtype {}, expected F32", name, e.dtype));
    if (!expected.empty() && e.shape != expected)
        fail(fmt::format("tensor '{}' has shape {}, expected {}", name, shape_str(e.shape), shape_str(expected)));
    Tensor t(e.shape);
    std::ifstream in(path_, std::ios::binary);
    in.seekg(std::streamoff(data_start_ + e.begin));
    in.read(reinterpret_cast<char*>(t.ptr()), std::streamsize(e.end - e.begin));
    if (!in) fail(fmt::format("could not read tensor '{}'", name));
    return t;
}

std::string SafetensorsFile::metadata(const std::string& key) const {
    auto it = metadata_.find(key);
    if (it == metadata_.end()) fail(fmt::format("metadata has no '{}'", key));
    return it->second;
}

}  // namespace attn
