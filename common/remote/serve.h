// serve.h — the runner's side of the channel: the loop that reads a request, calls the student's
// code and writes back raw outputs. Linked into runner_taskN with the task's handlers
// (taskN/serve.cpp) and the student's objects — and into nothing trusted.
//
// A handler either works on the request's buffers (a proxied call: the loop stages them on the
// device, poisons outputs, waits for the device afterwards and sends every buffer back) or fills
// the reply itself (a program: a whole prefill-and-decode run, a benchmark).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/remote/wire.h"

namespace attn::remote {

class Call {
public:
    explicit Call(Message req) : req_(std::move(req)) {}
    const nlohmann::json& args() const { return req_.head.at("args"); }
    int i(const char* name) const { return args().at(name).get<int>(); }
    double d(const char* name) const { return args().at(name).get<double>(); }
    bool b(const char* name) const { return args().at(name).get<bool>(); }
    std::string s(const char* name) const { return args().at(name).get<std::string>(); }
    // Buffer `idx` of a proxied call: device or host memory, as the caller's was.
    float* p(size_t idx) const { return ptrs_.at(idx); }
    Message reply;  // a program's outputs (head values, buffers)

private:
    friend int serve(const std::map<std::string, std::function<void(Call&)>>&);
    Message req_;
    std::vector<float*> ptrs_;
};

using Handlers = std::map<std::string, std::function<void(Call&)>>;

// Buffer `i` of a call whose proxy sent nullable arguments (proxy.h, NullableArgs): nullptr where the caller passed null.
inline float* nullable(Call& c, size_t i) {
    for (const auto& n : c.args().at("null"))
        if (n.get<size_t>() == i) return nullptr;
    return c.p(i);
}

// The task's handlers, by op name (taskN/serve.cpp defines it).
Handlers task_handlers();

// The runner's main loop: requests on fd 3, replies on fd 4, until fd 3 closes.
int serve(const Handlers& handlers);

// Device memory for proxied calls; nullptr in CPU tasks' runners (serve_cpu.cpp / serve_gpu.cpp).
struct Staging {
    virtual ~Staging() = default;
    virtual float* upload(const std::vector<float>& host) = 0;  // empty host: n NaN floats
    virtual float* poisoned(size_t n) = 0;
    virtual void download(const float* device, std::vector<float>& host) = 0;
    virtual void sync_default_stream() = 0;
    virtual void sync_device() = 0;
    virtual void release() = 0;  // frees every staged buffer
    virtual bool context_poisoned() = 0;
    virtual std::string device_name() = 0;
    // The kernels the student's call launches, for the trusted side's diagnosis of a hang (launch_log.h): `wanted`
    // before each request (as the request's head says), `on` around the student's call. Nothing in a CPU task.
    virtual void want_launch_log(bool wanted) { (void)wanted; }
    virtual void record_launches(bool on) { (void)on; }
};
Staging* staging();

}  // namespace attn::remote
