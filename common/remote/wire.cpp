// wire.cpp — see wire.h.
#include "common/remote/wire.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attn::remote {
namespace {

constexpr char kMagic[4] = {'A', 'T', 'N', 'L'};
constexpr Deadline kForever = Deadline::max();

void write_all(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw WireError(std::string("the channel closed while writing: ") + std::strerror(errno));
        p += w, n -= size_t(w);
    }
}

void read_all(int fd, void* data, size_t n, Deadline deadline) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        if (deadline != kForever) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) throw WireError("timed out");
            pollfd pf{fd, POLLIN, 0};
            const int ready = poll(&pf, 1, int(std::min<long long>(left.count(), 1000)));
            if (ready < 0 && errno != EINTR) throw WireError(std::string("poll: ") + std::strerror(errno));
            if (ready <= 0) continue;
        }
        const ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) throw WireError("the channel closed (the other side ended)");
        if (r < 0) throw WireError(std::string("read: ") + std::strerror(errno));
        p += r, n -= size_t(r);
    }
}

Message read_with(int fd, Deadline deadline, const ReadLimits& limits) {
    char magic[4];
    read_all(fd, magic, 4, deadline);
    if (std::memcmp(magic, kMagic, 4) != 0) throw WireError("malformed message (bad magic)");
    uint64_t head_len = 0;
    read_all(fd, &head_len, sizeof head_len, deadline);
    if (head_len > limits.max_head_bytes) throw WireError("malformed message (head too large)");
    std::string head(head_len, '\0');
    read_all(fd, head.data(), head.size(), deadline);
    Message m;
    try {
        m.head = nlohmann::json::parse(head);
    } catch (const nlohmann::json::exception&) {
        throw WireError("malformed message (head is not JSON)");
    }
    if (!m.head.is_object()) throw WireError("malformed message (head is not an object)");
    const nlohmann::json sizes = m.head.value("buffers", nlohmann::json::array());
    if (!sizes.is_array() || sizes.size() > limits.max_buffers) throw WireError("malformed message (buffer list)");
    uint64_t total = 0;
    for (const auto& s : sizes) {
        if (!s.is_number_unsigned()) throw WireError("malformed message (buffer size)");
        total += s.get<uint64_t>();
        if (total > limits.max_total_floats) throw WireError("malformed message (buffers too large)");
    }
    for (const auto& s : sizes) {
        m.buffers.emplace_back(s.get<uint64_t>());
        read_all(fd, m.buffers.back().data(), m.buffers.back().size() * sizeof(float), deadline);
    }
    return m;
}

}  // namespace

void write_message(int fd, const Message& m) {
    nlohmann::json head = m.head;
    head["buffers"] = nlohmann::json::array();
    for (const auto& b : m.buffers) head["buffers"].push_back(uint64_t(b.size()));
    const std::string text = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const uint64_t len = text.size();
    write_all(fd, kMagic, 4);
    write_all(fd, &len, sizeof len);
    write_all(fd, text.data(), text.size());
    for (const auto& b : m.buffers) write_all(fd, b.data(), b.size() * sizeof(float));
}

Message read_message(int fd, Deadline deadline, const ReadLimits& limits) { return read_with(fd, deadline, limits); }

Message read_message(int fd) { return read_with(fd, kForever, ReadLimits{1 << 24, 1 << 10, uint64_t(16) << 30}); }

std::string sanitize(const std::string& s, size_t max) {
    std::string out;
    for (unsigned char c : s) {
        if (out.size() >= max) {
            out += "…";
            break;
        }
        if (c == '\n' || c == '\r' || c == '\t') out += ' ';
        else if (c == '|' || c == '`') out += '\'';
        else if (c >= 0x20 && c != 0x7f) out += char(c);
    }
    return out;
}

}  // namespace attn::remote
