// test_node_window.cpp — the node's timing window (node_window.h) between processes, as the graders of a class on
// several GPUs use it: timing waits for work already inside, work waits for a timer, work runs beside work.
// Part of the harness unit tests (make unit).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "grader/node_window.h"

using grader::NodeWindow;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A child process that holds the window in `mode` for `hold_ms`, then exits; returns once it holds it.
pid_t holder(const std::string& dir, NodeWindow::Mode mode, int hold_ms) {
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        {
            NodeWindow w(dir, mode);
            (void)!write(ready[1], "x", 1);
            std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
        }
        _exit(0);
    }
    close(ready[1]);
    char c;
    REQUIRE(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    return pid;
}

std::string fresh_dir() {
    char tmpl[] = "/tmp/attnlab-window-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    return tmpl;
}

}  // namespace

TEST_CASE("node window: timing waits for the work inside, work waits for timing, work runs beside work", "[grader]") {
    const std::string dir = fresh_dir();
    SECTION("timing waits until the work already running is done") {
        const pid_t child = holder(dir, NodeWindow::Mode::work, 400);
        const auto t = std::chrono::steady_clock::now();
        { NodeWindow alone(dir, NodeWindow::Mode::timing); CHECK(alone.waited_s() >= 0.3); }
        CHECK(seconds_since(t) >= 0.3);
        waitpid(child, nullptr, 0);
    }
    SECTION("work waits while another process times") {
        const pid_t child = holder(dir, NodeWindow::Mode::timing, 400);
        const auto t = std::chrono::steady_clock::now();
        { NodeWindow work(dir, NodeWindow::Mode::work); }
        CHECK(seconds_since(t) >= 0.3);
        waitpid(child, nullptr, 0);
    }
    SECTION("two works at once: neither waits") {
        const pid_t child = holder(dir, NodeWindow::Mode::work, 400);
        const auto t = std::chrono::steady_clock::now();
        { NodeWindow work(dir, NodeWindow::Mode::work); }
        CHECK(seconds_since(t) < 0.2);
        waitpid(child, nullptr, 0);
    }
    SECTION("no directory: no window") {
        NodeWindow none("", NodeWindow::Mode::timing);
        CHECK(none.waited_s() == 0);
    }
    SECTION("a holder that dies lets the window go") {
        const pid_t child = holder(dir, NodeWindow::Mode::timing, 100);
        kill(child, SIGKILL);
        waitpid(child, nullptr, 0);
        const auto t = std::chrono::steady_clock::now();
        { NodeWindow work(dir, NodeWindow::Mode::work); }
        CHECK(seconds_since(t) < 0.2);
    }
}
