// node_window.cpp — see node_window.h.
#include "grader/node_window.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace grader {
namespace {

int open_lock(const std::string& path) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) throw std::runtime_error("node window: cannot open " + path + ": " + std::strerror(errno));
    return fd;
}

void lock(int fd, int how, const std::string& path) {
    while (flock(fd, how) != 0)
        if (errno != EINTR) throw std::runtime_error("node window: cannot lock " + path + ": " + std::strerror(errno));
}

}  // namespace

NodeWindow::NodeWindow(const std::string& dir, Mode mode) {
    if (dir.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    const std::string gate_path = dir + "/gate.lock", window_path = dir + "/window.lock";
    const int gate = open_lock(gate_path);
    try {
        window_fd_ = open_lock(window_path);
        lock(gate, LOCK_EX, gate_path);
        lock(window_fd_, mode == Mode::timing ? LOCK_EX : LOCK_SH, window_path);
    } catch (...) {
        close(gate);
        if (window_fd_ >= 0) close(window_fd_);
        window_fd_ = -1;
        throw;
    }
    close(gate);  // the gate's lock goes with its descriptor
    waited_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

NodeWindow::~NodeWindow() {
    if (window_fd_ >= 0) close(window_fd_);
}

}  // namespace grader
