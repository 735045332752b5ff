// node_window.h — the timing window of a class graded on several GPUs of one node at once (tools/class/batch_grade.py
// --gpus): while one grader times a task, nothing else of the class runs on the node — no other grader's timing, no
// correctness cases, no builds — so that another worker's host work (its oracles, its compilers, its copies) cannot
// move a timed call. The other work runs side by side as before; only timing is alone.
//
// Two lock files in one directory (flock: released by the kernel when a holder dies): work takes the gate for a moment
// and then the window shared; timing takes the gate, then the window exclusively (waiting for the work already inside to
// finish), and lets the gate go. A timer waiting at the gate keeps new work out, so timing is never starved.
// tools/class/node_window.py is the same protocol for the builds.
#pragma once
#include <string>

namespace grader {

class NodeWindow {
public:
    enum class Mode { work, timing };
    // An empty dir: no window (one GPU, or a grader run on its own).
    NodeWindow(const std::string& dir, Mode mode);
    ~NodeWindow();
    NodeWindow(const NodeWindow&) = delete;
    NodeWindow& operator=(const NodeWindow&) = delete;
    double waited_s() const { return waited_s_; }  // how long the window kept this one waiting

private:
    int window_fd_ = -1;
    double waited_s_ = 0;
};

}  // namespace grader
