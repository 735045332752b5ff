"""Which folders hold which task: `taskN`, and for a task with parts (Task 4: `task4_bf16`, `task4_backward`,
`task4_bf16_backward`) the folders the Makefile's TASKn_PARTS names. One task's parts share its runner (runner_taskN) and its grade.

    task_folders(4)            -> ["task4", "task4_bf16", "task4_backward", "task4_bf16_backward"]
    task_of("task4_bf16")      -> 4   (None for a name that is no task folder)
"""
import functools
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = re.compile(r"task([0-9]+)(_[a-z0-9]+)*")  # the shape of a task folder's name
FOLDER_RE = r"task[0-9]+(_[a-z0-9]+)*"  # the same, for regular expressions built elsewhere


@functools.lru_cache(maxsize=None)  # the Makefile read once a process
def _parts():
    with open(os.path.join(ROOT, "Makefile")) as f:
        return {int(m.group(1)): m.group(2).split() for m in re.finditer(r"^TASK(\d+)_PARTS\s*:=\s*(.+)$", f.read(), re.M)}


def task_folders(task):
    """The folders of task `task` (an int), the task's own first."""
    return _parts().get(int(task), [f"task{task}"])


def task_of(folder):
    """The task number of a folder name, or None when it is no task's folder."""
    m = FOLDER.fullmatch(folder)
    if not m:
        return None
    task = int(m.group(1))
    return task if folder in task_folders(task) else None
