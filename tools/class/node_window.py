"""The timing window of a class graded on several GPUs at once (grader/node_window.h): while one grader times a task,
nothing else of the class runs on the node. Builds are work: they take the window shared (after a moment at the gate),
so a timer waiting at the gate keeps new builds out and waits for those already running.

    with node_window(directory):   # directory None: no window (one worker)
        build(...)
"""
import contextlib
import fcntl
import os


@contextlib.contextmanager
def node_window(directory):
    if directory is None:
        yield
        return
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "gate.lock"), "a+") as gate, open(os.path.join(directory, "window.lock"), "a+") as window:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(window, fcntl.LOCK_SH)
        fcntl.flock(gate, fcntl.LOCK_UN)
        yield
