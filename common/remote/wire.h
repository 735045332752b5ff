// wire.h — the messages between the trusted side (tests, grader) and a runner (the process that
// holds the student's code).
//
// A message is a JSON head and float32 buffers: "ATNL", the head's length (u64), the head, then
// each buffer's bytes in the order the head's "buffers" array lists their element counts. The
// trusted side reads a runner's reply with a deadline and hard limits (head size, buffer count and
// bytes): a runner that writes garbage, or anything at all, to its channel produces a malformed
// reply — an error for that call — never a verdict.
#pragma once
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::remote {

struct Message {
    nlohmann::json head = nlohmann::json::object();
    std::vector<std::vector<float>> buffers;
};

// The channel broke: EOF, a malformed message, a limit or the deadline passed.
struct WireError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct ReadLimits {
    size_t max_head_bytes = 1 << 20;
    size_t max_buffers = 64;
    uint64_t max_total_floats = uint64_t(8) << 30;  // 32 GB
};

using Deadline = std::chrono::steady_clock::time_point;

void write_message(int fd, const Message& m);
// Blocks until a whole message has arrived or `deadline` passes (WireError "timed out").
Message read_message(int fd, Deadline deadline, const ReadLimits& limits = {});
// Without a deadline (the runner's side: it waits for the next request for as long as it takes).
Message read_message(int fd);

// Text that came from a runner, made safe for a report: one line, printable, at most `max` bytes.
std::string sanitize(const std::string& s, size_t max = 400);

}  // namespace attn::remote
