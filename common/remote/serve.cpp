// serve.cpp — see serve.h. Runs inside the runner, beside the student's code: nothing here is
// trusted, and nothing here decides a verdict.
#include "common/remote/serve.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common/cuda/cuda_error.h"
#include "common/todo.h"

namespace attn::remote {
namespace {

constexpr int kRequests = 3, kReplies = 4;

struct SubmissionFaultSignal {};  // outputs still changing after the call: work on a side stream

nlohmann::json error_of(const char* type, const std::string& what) { return {{"type", type}, {"what", what}}; }

// The student's call's kernel launches are recorded while one lives (launch_log.h), whichever way the call ends.
struct RecordLaunches {
    explicit RecordLaunches(Staging* st) : st_(st) {
        if (st_) st_->record_launches(true);
    }
    ~RecordLaunches() {
        if (st_) st_->record_launches(false);
    }
    Staging* st_;
};

// Stages a proxied call's buffers, runs it, and sends every buffer back.
void run_proxied(const std::function<void(Call&)>& handler, Call& c, Message& req, std::vector<float*>& ptrs) {
    const nlohmann::json& bufs = req.head.at("bufs");
    Staging* st = staging();
    std::vector<bool> device(bufs.size());
    for (size_t i = 0; i < bufs.size(); ++i) {
        const nlohmann::json& b = bufs[i];
        const int alias = b.at("alias").get<int>();
        const size_t n = b.at("n").get<size_t>();
        device[i] = b.at("device").get<bool>();
        if (device[i] && !st) throw std::logic_error("a device buffer in a CPU task");
        if (alias >= 0 && size_t(alias) < i) {
            ptrs.push_back(ptrs[size_t(alias)]);
            continue;
        }
        std::vector<float>& host = req.buffers.at(i);
        if (b.at("role") == "out") host.assign(n, std::nanf(""));
        if (host.size() != n) throw std::logic_error("a buffer of the wrong size");
        ptrs.push_back(device[i] ? (b.at("role") == "out" ? st->poisoned(n) : st->upload(host)) : host.data());
    }
    {
        const RecordLaunches during_the_call(st);
        handler(c);
    }
    c.reply.buffers.assign(bufs.size(), {});
    if (st) st->sync_default_stream();
    for (size_t i = 0; i < bufs.size(); ++i) {
        if (bufs[i].at("alias").get<int>() >= 0) continue;
        if (!device[i]) {
            c.reply.buffers[i] = std::move(req.buffers[i]);
            continue;
        }
        st->download(ptrs[i], c.reply.buffers[i]);
    }
    if (!st) return;
    // Work left running on another stream shows as an output that changes once the device is idle.
    st->sync_device();
    std::vector<float> later;
    for (size_t i = 0; i < bufs.size(); ++i) {
        if (!device[i] || bufs[i].at("alias").get<int>() >= 0 || bufs[i].at("role") == "in") continue;
        st->download(ptrs[i], later);
        if (std::memcmp(later.data(), c.reply.buffers[i].data(), later.size() * sizeof(float)) != 0)
            throw SubmissionFaultSignal{};
    }
}

}  // namespace

int serve(const Handlers& handlers) {
    // What the student's code prints reaches the terminal or the task's log at once: a call that crashes loses
    // nothing it printed before (a pipe is otherwise fully buffered).
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    for (;;) {
        Message req;
        try {
            req = read_message(kRequests);
        } catch (const WireError&) {
            return 0;  // the trusted side closed the channel: done
        }
        const std::string op = req.head.value("op", "");
        if (!req.head.contains("args")) req.head["args"] = nlohmann::json::object();
        // the kernels of a proxied call are logged unless the request says not; a program's (a timing) only if it asks
        const bool launch_log = req.head.value("launch_log", req.head.contains("bufs"));
        Call c(std::move(req));
        bool exiting = false;
        try {
            if (staging()) staging()->want_launch_log(launch_log);
            if (op == "hello") {
                c.reply.head["device"] = staging() ? staging()->device_name() : "";
            } else {
                auto h = handlers.find(op);
                if (h == handlers.end()) throw std::logic_error("this runner has no operation " + op);
                if (c.req_.head.contains("bufs")) run_proxied(h->second, c, c.req_, c.ptrs_);
                else h->second(c);
            }
            c.reply.head["ok"] = true;
        } catch (const SubmissionFaultSignal&) {
            c.reply = {};
            c.reply.head["error"] = error_of("fault", "the output changed after the default stream had finished: work is "
                                                      "still running on another stream (launch on the default stream, or "
                                                      "synchronise before returning)");
        } catch (const NotImplemented& e) {
            c.reply = {}, c.reply.head["error"] = error_of("not_implemented", e.what());
        } catch (const CudaError& e) {
            c.reply = {}, c.reply.head["error"] = error_of("cuda", e.what());
        } catch (const std::invalid_argument& e) {
            c.reply = {}, c.reply.head["error"] = error_of("invalid_argument", e.what());
        } catch (const std::out_of_range& e) {
            c.reply = {}, c.reply.head["error"] = error_of("out_of_range", e.what());
        } catch (const std::logic_error& e) {
            c.reply = {}, c.reply.head["error"] = error_of("logic_error", e.what());
        } catch (const std::exception& e) {
            c.reply = {}, c.reply.head["error"] = error_of("other", e.what());
        }
        if (staging()) {
            try {
                staging()->release();
            } catch (const std::exception&) {
            }
            exiting = staging()->context_poisoned();
        }
        if (exiting) c.reply.head["exiting"] = true;
        std::fflush(stdout);
        try {
            write_message(kReplies, c.reply);
        } catch (const WireError&) {
            return 0;
        }
        if (exiting) return 0;  // a dead CUDA context: the trusted side starts a fresh runner
    }
}

}  // namespace attn::remote
