#!/usr/bin/env python3
"""Grades a whole class: every submission built in a clean tree of its own, in a sandbox, and
graded by the course's own grader.

    tools/class/batch_grade.py --submissions DIR [--out DIR] [--timeout S]       grade all here, in turn
    tools/class/batch_grade.py --submissions DIR --slurm [--gres gpu:h100:1] …   write a Slurm job array
    tools/class/batch_grade.py --submissions DIR --index I                        one submission (an array task)
    tools/class/batch_grade.py --collect --out DIR                                merge results into the gradebook
    … [--gpus all|0,1]   one worker per GPU of this host (tools/class/gpus.py)
    … [--history FILE] [--no-report]   the class report (OUT/report/, tools/class/class_report.py) and its history
    … [--tasks 4,5] [--build-only | --grade-only]   grade some tasks; build here, grade on a GPU node later

(`build/reference/bin/grader --submissions DIR …` runs this script with the same arguments.)

A submission is a folder or a .tar.gz/.tgz in DIR, named after the student (names are reduced to
[A-Za-z0-9_.@+-]; the row says so when that changed one), holding the kit's layout.

What is taken. For each task folder (`taskN`, and Task 4's bonus parts `task4_bf16`, `task4_backward`,
`task4_bf16_backward`: the Makefile's TASK4_PARTS), `<folder>/skeleton/NAME` where NAME matches
[A-Za-z0-9_]+.(cpp|cu|h|cuh) and the course's <folder>/skeleton/ holds a file of that name. Any other file in a skeleton/ folder (a file of another
folder's skeleton is named with the folder it belongs in), and any archive member with an absolute or '..' path or of an
odd type, is ignored and named in the row's flags ("ignored: …"). Refused outright (no build, the
flags say why): a symbolic or hard link or a special file anywhere in the submission, a link in an
archive, and in a taken file an #include (or #include_next/#import/#embed, digraph and trigraph
spellings too) whose path is absolute or contains '..', or that is computed from a macro.

Where it is built. OUT/<student>/tree: the course's tracked files as the student kit holds them
(no reference solutions, controls, exploits, staff tools or run logs; no goldens, no .git, nothing
of the instructor's build/), plus the course harness's objects from OUT/.course, a tree made and
built the same way from the course's files alone (so only the student's files are compiled per
submission). The taken files are copied over the skeleton's, and the runners of the tasks they
reach (`make IMPL=skeleton build/skeleton/bin/runner_taskN…`: the course's Makefile, no
-DSOLUTION) are built inside bubblewrap: no network, a fresh /tmp, only /usr and that tree visible,
a clean environment. Where bubblewrap cannot start: as uid 65534 (when root), else as this user;
the gradebook's `sandbox` column says which.

How it is graded. By the course's grader, ROOT/build/reference/bin/grader (it links no student
code; built here if missing), run from ROOT so it reads ROOT's goldens and grader/rubric.json, on
the runners built in the tree (--bin-dir) against the reference's (--reference-bin-dir), checking
the submitted files for edited harness files (--root) and the student's objects for disallowed
symbols (--objects). Tasks the submission has no file for are not graded (0 in the gradebook).
No name from a submission reaches a shell: every command is an argument list, and the paths that
reach the grader are fixed names under OUT. One submission that does not build, crashes or hangs
costs only its own row of OUT/gradebook.csv (and OUT/<student>/row.json).
"""
import argparse
import csv
import glob
import json
import os
import re
import resource
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ci"))
from task_folders import FOLDER, task_folders, task_of  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import class_report  # noqa: E402
import gpus as gpu_pool  # noqa: E402
from node_window import node_window  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRADER = os.path.join(ROOT, "build/reference/bin/grader")
RUBRIC = os.path.join(ROOT, "grader/rubric.json")
REFERENCE_BINS = os.path.join(ROOT, "build/reference/bin")


def staff_only():
    """What the student kit leaves out (tools/kit/staff_only.txt, as tools/kit/make_release.sh reads it), and
    any folder named like staff material anywhere."""
    with open(os.path.join(ROOT, "tools/kit/staff_only.txt")) as f:
        patterns = [line.split()[0] for line in f if line.strip() and not line.lstrip().startswith("#")]
    return re.compile("|".join(patterns) + r"|(^|/)(reference|controls|exploits|ladder)(/|$)")


STAFF_ONLY = staff_only()
STUDENT_FILE = re.compile(r"^[A-Za-z0-9_]+\.(cpp|cu|h|cuh)$")
STUDENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$")
MAX_SOURCE = 1 << 20          # bytes of one taken file
MAX_ARCHIVE = 512 << 20       # bytes unpacked from one archive
BUILD_USER = 65534
PATH = "/usr/local/cuda/bin:/usr/bin:/bin"
COURSE = ".course"            # OUT/.course: the course's own tree, built once (never a student's name: those start [A-Za-z0-9_])


class Refused(Exception):
    """The submission is not built, for the reason given."""


# ---- the submissions ---------------------------------------------------------------------------

def submissions(directory):
    """(student, path, note) of every submission in `directory`, in a fixed order (--index uses it)."""
    subs, seen = [], set()
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if entry.startswith("."):
            continue
        if os.path.isdir(path):
            stem = entry
        elif entry.endswith((".tar.gz", ".tgz")) and os.path.isfile(path):
            stem = entry[: -len(".tar.gz")] if entry.endswith(".tar.gz") else entry[: -len(".tgz")]
        else:
            print(f"batch: skipping {entry!r} (neither a folder nor a .tar.gz)", file=sys.stderr)
            continue
        name = re.sub(r"[^A-Za-z0-9_.@+-]", "_", stem)
        if not STUDENT.match(name):
            name = "_" + name
        base, n = name, 2
        while name in seen:
            name, n = f"{base}_{n}", n + 1
        seen.add(name)
        note = "" if name == stem else f"submission {entry!r} graded as {name!r}"
        subs.append((name, path, note))
    return subs


with open(os.path.join(ROOT, "grader/protected.sha256")) as _f:  # the harness files a submission may not edit
    PROTECTED = {line.split(None, 1)[1].strip() for line in _f if line.strip()}
MAX_ENTRIES = 20000           # files and folders read from one submission (a folder or an archive)
MAX_DEPTH = 16                # folders deep


def human(n):
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def folder_entries(top):
    """(relative path, kind, size) of a submission folder, read without following links or copying anything:
    kind is 'dir', 'file', 'link', 'hardlink' or 'special'. Refused past MAX_ENTRIES or MAX_DEPTH."""
    out = []
    for folder, dirs, files in os.walk(top):
        depth = os.path.relpath(folder, top).count(os.sep) + 1
        if depth > MAX_DEPTH:
            raise Refused(f"the submission nests folders more than {MAX_DEPTH} deep: "
                          f"{os.path.relpath(folder, top)!r}")
        for n in dirs + files:
            p = os.path.join(folder, n)
            st = os.lstat(p)
            kind = ("link" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else
                    ("hardlink" if st.st_nlink > 1 else "file") if stat.S_ISREG(st.st_mode) else "special")
            out.append((os.path.relpath(p, top), kind, st.st_size))
            if len(out) > MAX_ENTRIES:
                raise Refused(f"the submission holds more than {MAX_ENTRIES} files and folders (a build folder, or "
                              f"a dataset? hand in the skeleton files only)")
    return out


def archive_entries(tar, notes):
    """The same for an archive, member by member: its declared sizes are summed as it is read, so an archive
    of many members or of huge ones is refused before it is read to the end."""
    out, total = [], 0
    for m in tar:
        if os.path.isabs(m.name) or ".." in m.name.replace("\\", "/").split("/"):
            notes.append(f"ignored: archive member {m.name!r} (absolute or '..' path)")
            continue
        kind = ("link" if m.issym() or m.islnk() else "dir" if m.isdir() else "file" if m.isfile() else "special")
        if kind == "special":
            notes.append(f"ignored: archive member {m.name!r} (not a plain file or folder)")
            continue
        name = os.path.normpath(m.name)
        if name.count("/") + 1 > MAX_DEPTH + 1:
            raise Refused(f"the archive nests folders more than {MAX_DEPTH} deep: {m.name!r}")
        total += m.size if kind == "file" else 0
        if total > MAX_ARCHIVE:
            raise Refused(f"the archive unpacks to more than {MAX_ARCHIVE >> 20} MB ({m.name!r} is {human(m.size)})")
        out.append((name, kind, m.size, m))
        if len(out) > MAX_ENTRIES:
            raise Refused(f"the archive holds more than {MAX_ENTRIES} members (hand in the skeleton files only)")
        tar.members = []  # what was read is not kept: ten million members must not fill the memory
    return out


def skeleton_path(rel):
    """(task folder, name) when `rel` is <task folder>/skeleton/<name>, else None."""
    parts = rel.split(os.sep)
    return (parts[0], parts[2]) if len(parts) == 3 and FOLDER.fullmatch(parts[0]) and parts[1] == "skeleton" else None


def unpack(path, work, notes):
    """The skeleton files of the submission as WORK/submitted/<task folder>/skeleton/<name>, and nothing else.
    A folder is read like an archive: its entries are listed (no link followed, nothing copied), refused past
    MAX_ENTRIES or MAX_DEPTH or when it holds a link, a hard link or a special file; then only the skeleton-named
    files (at most MAX_SOURCE bytes each) are copied, and the harness files it holds (only read by the grader's
    check that none was edited; the build uses the course's). An archive likewise, extracting only those. A single top
    folder that is no task folder is looked into. The rest never crosses: a 1 TB sparse file beside the skeleton
    costs nothing."""
    dest = os.path.join(work, "submitted")
    shutil.rmtree(dest, ignore_errors=True)
    path = os.path.realpath(path)  # the course's own link to a submission (Gradescope) is fine
    if os.path.isdir(path):
        return take(path, None, [(rel, kind, size, None) for rel, kind, size in folder_entries(path)], dest, notes)
    with tarfile.open(path) as tar:
        return take(path, tar, archive_entries(tar, notes), dest, notes)


def take(path, tar, entries, dest, notes):
    """unpack()'s second half: the entries checked, and the files that cross copied into `dest`."""
    for rel, kind, size, _ in entries:
        if kind == "link":
            raise Refused(f"{'a link in the archive' if tar else 'a symbolic link in the submission'}: {rel!r}")
        if kind == "hardlink":
            raise Refused(f"a hard link in the submission: {rel!r}")
        if kind == "special":
            raise Refused(f"a special file (not a plain file or folder) in the submission: {rel!r}")
    tops = {rel.split(os.sep)[0] for rel, _, _, _ in entries}
    prefix = ""
    if len(tops) == 1 and not FOLDER.fullmatch(top := next(iter(tops))) and any(r.startswith(top + os.sep) for r, _, _, _ in entries):
        prefix = top + os.sep  # an archive (or folder) holding one folder: that folder
    os.makedirs(dest)
    largest = max(((size, rel) for rel, kind, size, _ in entries if kind == "file"), default=(0, ""))

    def copy(member, rel, target, shown):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        # a folder's file opened without following a link: one swapped in since it was listed is refused
        src = tar.extractfile(member) if tar else os.fdopen(os.open(os.path.join(path, rel), os.O_RDONLY | os.O_NOFOLLOW), "rb")
        with src, open(target, "wb") as out:
            data = src.read(MAX_SOURCE + 1)
            if len(data) > MAX_SOURCE:  # grew since it was listed
                raise Refused(f"{shown}: more than {MAX_SOURCE >> 20} MB")
            out.write(data)

    for rel, kind, size, member in entries:
        inner = rel[len(prefix):] if rel.startswith(prefix) else None
        if kind != "file" or inner is None:
            continue
        if inner in PROTECTED and size <= MAX_SOURCE:  # harness files: only read, for the check that none was edited
            copy(member, rel, os.path.join(dest, inner), inner)
            continue
        if not (where := skeleton_path(inner)):
            continue
        task, name = where
        shown = f"{task}/skeleton/{name}"
        if not STUDENT_FILE.match(name):
            notes.append(f"ignored: {shown!r} (not a name a skeleton file has: [A-Za-z0-9_]+.(cpp|cu|h|cuh))")
            continue
        if size > MAX_SOURCE:
            raise Refused(f"{shown}: {human(size)} (a skeleton file may have at most {MAX_SOURCE >> 20} MB)")
        copy(member, rel, os.path.join(dest, task, "skeleton", name), shown)
    if largest[0] > MAX_SOURCE:
        notes.append(f"ignored: everything but the skeleton files, the largest {largest[1]!r} ({human(largest[0])})")
    return dest


# ---- what is taken ---------------------------------------------------------------------------

# A C/C++ lexer just good enough to find comments: raw strings, strings, character literals and
# pp-numbers (digit separators: 1'000) are stepped over so that a "/*" inside them is not a comment.
TOKEN = re.compile(r"""
    (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\((?s:.*?)\)(?P=delim)")
  | (?P<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<num>\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<block>/\*(?s:.*?)\*/)
  | (?P<line>//[^\n]*)
  | (?P<other>(?s:.))
""", re.X)
# A directive that reads a file: #include, #include_next, #import, #embed; '#' also as %: or ??=.
DIRECTIVE = re.compile(r"^[ \t\f\v]*(?:#|%:)[ \t\f\v]*(include_next|include|import|embed)\b[ \t\f\v]*(.*)$")


def splice(text):
    """Translation phase 2: a backslash at the end of a line (trailing blanks allowed, as GCC
    does) joins it with the next; the joined lines' newlines follow the logical line, so line
    numbers stay those of the file. CR LF and a lone CR end a line too (as GCC has it)."""
    out, pending = [], 0
    for phys in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        body = phys.rstrip(" \t\f\v")
        if body.endswith("\\"):
            out.append(body[:-1])
            pending += 1
        else:
            out.append(phys + "\n" * (pending + 1))
            pending = 0
    return "".join(out)


TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}", "-": "~"}


def without_comments(text):
    """Comments replaced by a space (a block comment keeps its newlines: a directive after it is
    still found at the start of its line)."""
    out = []
    for m in TOKEN.finditer(text):
        kind = m.lastgroup if m.lastgroup != "delim" else "raw"
        if kind == "block":
            out.append(" " + "\n" * m.group(0).count("\n"))
        elif kind == "line":
            out.append(" ")
        else:
            out.append(m.group(0))
    return "".join(out)


def check_source(path, rel):
    """Refuses a taken file that is too large or includes a file by an absolute or escaping path,
    or by a macro."""
    size = os.lstat(path).st_size
    if size > MAX_SOURCE:
        raise Refused(f"{rel}: {size} bytes (a skeleton file may have at most {MAX_SOURCE})")
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        raise Refused(f"{rel}: a NUL byte (not a source file)")
    text = data.decode("utf-8", errors="replace")
    # Read as GCC reads it (no trigraphs in C++17) and, to be safe, as a compiler with trigraphs would.
    for variant in (text, re.sub(r"\?\?([=/'()!<>-])", lambda m: TRIGRAPHS[m.group(1)], text)):
        for number, line in enumerate(without_comments(splice(variant)).split("\n"), 1):
            m = DIRECTIVE.match(line)
            if not m:
                continue
            directive, target = m.group(1), m.group(2).strip()
            if not target or target[0] not in '<"':
                raise Refused(f"{rel}:{number}: a computed #{directive} ({target[:80]!r}): name the file in quotes or <>")
            close = target.find(">" if target[0] == "<" else '"', 1)
            name = target[1:close] if close > 0 else target[1:]
            if name.startswith("/") or ".." in name:
                raise Refused(f"{rel}:{number}: #{directive} of {name!r} (absolute or escaping paths are not allowed)")


def course_tasks():
    """Task folders of the course that have a skeleton."""
    return sorted((d for d in os.listdir(ROOT) if task_of(d) is not None and os.path.isdir(os.path.join(ROOT, d, "skeleton"))),
                  key=lambda d: (task_of(d), d))


def student_files(submitted, notes):
    """(task folder, name, path) of every file the submission may give; the others are noted.
    Raises Refused for a taken file that may not be built."""
    taken = []
    course = set(course_tasks())
    for task in sorted(d for d in os.listdir(submitted) if FOLDER.fullmatch(d)):
        src = os.path.join(submitted, task, "skeleton")
        if not os.path.isdir(src):
            continue
        for name in sorted(os.listdir(src)):
            rel = f"{task}/skeleton/{name}"
            path = os.path.join(src, name)
            if not os.path.isfile(path):
                notes.append(f"ignored: {rel!r} (not a file)")
            elif task not in course or not os.path.isfile(os.path.join(ROOT, task, "skeleton", name)):
                home = [d for d in course if os.path.isfile(os.path.join(ROOT, d, "skeleton", name))]
                notes.append(f"ignored: {rel!r} (not a file of the course's skeleton"
                             + (f"; the course's {name} is {home[0]}/skeleton/{name})" if home else ")"))
            else:
                taken.append((task, name, path))
    for task, name, path in taken:
        check_source(path, f"{task}/skeleton/{name}")
    return taken


def users_of(tasks):
    """The tasks whose runners hold code of `tasks` (TASKn_USES in the Makefile), and `tasks`."""
    with open(os.path.join(ROOT, "Makefile")) as f:
        uses = {int(m.group(1)): set(map(int, m.group(2).split())) for m in re.finditer(r"^TASK(\d+)_USES\s*:=\s*([\d ]+)$", f.read(), re.M)}
    out = set(tasks)
    for t, used in uses.items():
        if used & set(tasks):
            out.add(t)
    return sorted(out)


def rubric_tasks():
    with open(RUBRIC) as f:
        return sorted(int(t["id"]) for t in json.load(f)["tasks"])


def runner_targets(tasks):
    return [f"build/skeleton/bin/runner_task{t}" for t in tasks]


# ---- trees and builds ------------------------------------------------------------------------

def course_files():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\0")
    return [f for f in files if f and not STAFF_ONLY.search(f)]


def course_tree(dest, objects_from=None, keep_build=False):
    """The course's tracked files as the student kit has them (no solutions, controls, staff tools,
    goldens or build), with their times (so that objects built from them stay current); and the
    harness objects of `objects_from` (a course tree built before), or the build/ `dest` has."""
    if keep_build and os.path.isdir(dest):
        for entry in os.listdir(dest):
            if entry != "build":
                p = os.path.join(dest, entry)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    else:
        shutil.rmtree(dest, ignore_errors=True)
    for f in course_files():
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dest, f))
    common = objects_from and os.path.join(objects_from, "build/common")
    if common and os.path.isdir(common):
        shutil.copytree(common, os.path.join(dest, "build/common"), symlinks=True)
    os.makedirs(os.path.join(dest, "build/skeleton/bin"), exist_ok=True)


_SANDBOX = None


def bwrap_args(tree):
    """The build's sandbox: the toolchain read-only, the tree writable, no network, nothing else."""
    a = ["/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            a += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            a += ["--ro-bind", top, top]
    a += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
          "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", tree, tree, "--chdir", tree, "--clearenv",
          "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp", "--uid", "65534", "--gid", "65534", "--"]
    return a


def sandbox_kind():
    """How builds run here: "bubblewrap", "uid 65534" (no bubblewrap; root) or "none …"."""
    global _SANDBOX
    if _SANDBOX is None:
        try:
            ok = subprocess.run(bwrap_args("/tmp") + ["/usr/bin/true"], capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        _SANDBOX = "bubblewrap" if ok else f"uid {BUILD_USER}" if os.geteuid() == 0 else "none (not root, no bubblewrap)"
    return _SANDBOX


BUILD_MEMORY = 4 << 30        # address space of each build process (the compilers; nvcc's heaviest course file needs ~0.25 GB)
BUILD_FILE = 256 << 20        # bytes of one file a build writes (the course's largest object or runner: under 50 MB)


def limits():
    """The limits of every process of a submission's build: no core files, no file over BUILD_FILE, at most
    BUILD_MEMORY of address space each (a template or macro bomb stops there; make runs two compilers at once)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (BUILD_FILE, BUILD_FILE))
    resource.setrlimit(resource.RLIMIT_AS, (BUILD_MEMORY, BUILD_MEMORY))


def as_build_user():
    limits()
    os.setgroups([])
    os.setgid(BUILD_USER)
    os.setuid(BUILD_USER)


class Worker:
    """Where one submission is built and graded: the whole host (serial grading), or one GPU and its share of the
    CPU cores (--gpus: one worker per GPU; tools/class/gpus.py)."""

    def __init__(self, gpu=None, cores=None, window=None):
        # window: the node's timing window (grader/node_window.h), a directory shared by the workers of one node
        self.gpu, self.cores, self.window = gpu, cores, window

    def jobs(self):
        return len(self.cores) if self.cores else 2

    def pinned(self, then=None):
        """A child's preexec: these cores only (its builds and host work stay off the other workers' cores), then `then`."""
        def run():
            if self.cores:
                os.sched_setaffinity(0, self.cores)
            if then:
                then()
        return run if (self.cores or then) else None

    def label(self):
        return gpu_pool.label(self.gpu) if self.gpu else ""

    def grader_args(self):
        return (["--graded-on", self.label()] if self.gpu else []) + (["--node-window", self.window] if self.window else [])

    def pin(self):
        """The variables that keep this worker's grader and its runners on its GPU (none on the whole host)."""
        return gpu_pool.worker_env(self.gpu) if self.gpu else {}


SERIAL = Worker()


def run_limited(argv, cwd, log, timeout, env=None, preexec=limits):
    """Runs argv (a list: no shell) in its own session; on timeout kills the whole group and raises."""
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                         preexec_fn=preexec, start_new_session=True)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        raise


def build(tree, targets, log, timeout, worker=SERIAL):
    """Makes `targets` in `tree` (the course's Makefile, IMPL=skeleton) inside the sandbox, on the worker's cores;
    returns (how it was sandboxed, whether it built)."""
    # CCACHE= : no compiler cache, whatever the environment says (make test's would be shared between students)
    cmd = ["make", "--no-print-directory", f"-j{worker.jobs()}", "IMPL=skeleton", "CCACHE=", "V=1"] + targets  # V=1: full commands
    if os.environ.get("CUDA_ARCH"):  # e.g. sm_90 alone, for a class graded on H100s
        cmd.append("CUDA_ARCH=" + os.environ["CUDA_ARCH"])
    how = sandbox_kind()
    pre = limits
    if how == "bubblewrap":
        argv = bwrap_args(tree) + cmd
    else:
        argv = cmd
        if how.startswith("uid"):
            owner(tree, BUILD_USER, BUILD_USER)
            pre = as_build_user
    print(f"build ({how}): {' '.join(shlex.quote(c) for c in cmd)}", file=log, flush=True)
    try:
        with node_window(worker.window):  # never while another GPU's grader times (grader/node_window.h)
            rc = run_limited(argv, tree, log, timeout, env={"PATH": PATH, "HOME": "/tmp"}, preexec=worker.pinned(pre))
    finally:
        if how.startswith("uid"):  # the build user (also the fallback runners' user) may write the tree no longer
            owner(tree, os.geteuid(), os.getegid())
    return how, rc == 0


def owner(tree, uid, gid):
    for folder, dirs, files in os.walk(tree):
        for n in [folder] + [os.path.join(folder, f) for f in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]]:
            os.lchown(n, uid, gid)


class CourseBuild:
    """OUT/.course: the course's tree, its runners built in the sandbox like a submission's, whose
    harness objects every submission's tree starts from. Built as needed in a batch run (and by
    --slurm); an array task only reads it, if it is there."""

    def __init__(self, out, may_build):
        self.dir = os.path.abspath(os.path.join(out, COURSE))
        self.tree = os.path.join(self.dir, "tree")
        self.may_build = may_build
        self.synced = False
        self.built = set()
        self.lock = threading.Lock()  # workers on several GPUs: the course's tree is built once, by the first that needs it
        self.build_s = {}  # seconds the course's own skeleton files of a task took to build, runners included

    def objects(self):
        return self.tree if os.path.isdir(os.path.join(self.tree, "build/common")) else None

    def ensure(self, tasks, timeout, worker=SERIAL):
        with self.lock:
            self._ensure(tasks, timeout, worker)

    def _ensure(self, tasks, timeout, worker):
        if not self.may_build:
            return
        todo = [t for t in tasks if t not in self.built]
        if not todo:
            return
        os.makedirs(self.dir, exist_ok=True)
        if not self.synced:  # fresh sources each run; the objects kept, so make rebuilds only what changed
            course_tree(self.tree, keep_build=True)
            self.synced = True
        # The course's skeleton files compiled afresh, as a submission's are: the yardstick of a student's build time.
        for t in todo:
            for d in task_folders(t):
                for f in glob.glob(os.path.join(self.tree, d, "skeleton", "*")):
                    os.utime(f)
        with open(os.path.join(self.dir, "build.log"), "a") as log:
            started = time.monotonic()
            try:
                how, ok = build(self.tree, runner_targets(todo), log, timeout, worker)
            except subprocess.TimeoutExpired:
                how, ok = f"timed out after {timeout} s", False
            for t in todo:
                self.build_s[t] = (time.monotonic() - started) / len(todo)
        if not ok:
            raise SystemExit(f"batch: the course's own runners ({', '.join(map(str, todo))}) do not build in the sandbox "
                             f"({how}); see {os.path.join(self.dir, 'build.log')}")
        self.built.update(todo)


def build_timeout(course, graded, timeout):
    """A submission's build may take 10× what the course's own skeleton files of the same tasks took, and a minute
    more (never under 2 minutes, never over --timeout): a compile-time bomb stops there, not after an hour."""
    measured = [course.build_s[t] for t in graded if course and t in course.build_s]
    if len(measured) < len(graded):
        return timeout
    return int(min(timeout, max(120, 10 * sum(measured) + 60)))


def build_failure(log_path):
    """Why a build failed, when the log says it ran out of a limit; else the plain words."""
    try:
        with open(log_path, errors="replace") as f:
            tail = f.read()[-20000:]
    except OSError:
        return "does not build (see grade.log)"
    if re.search(r"virtual memory exhausted|Cannot allocate memory|out of memory|std::bad_alloc", tail):
        return f"the build ran out of memory: a compiler process used more than {BUILD_MEMORY >> 30} GB (see grade.log)"
    if re.search(r"File size limit exceeded", tail):
        return f"the build wrote a file over {BUILD_FILE >> 20} MB (see grade.log)"
    return "does not build (see grade.log)"


def ensure_grader():
    """The course's grader (its build also makes the reference runners: the yardstick of
    performance), made in ROOT where missing."""
    if not os.access(GRADER, os.X_OK):
        print("batch: building the course's grader (make -j1 IMPL=reference build/reference/bin/grader)", flush=True)
        subprocess.run(["make", "--no-print-directory", "-j1", "IMPL=reference", "build/reference/bin/grader"], cwd=ROOT, check=True)


# ---- one submission --------------------------------------------------------------------------

def grade_one(name, path, out, timeout, mode="both", tasks=None, course=None, note="", worker=SERIAL, case_timeout=None):
    """Builds and grades one submission; returns its row for the gradebook (also OUT/<name>/row.json).
    mode: what to do of it ("build", "grade": the runners built before, "both")."""
    work = os.path.abspath(os.path.join(out, name))  # absolute: the build's sandbox binds it
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "grade.log"), "a" if mode == "grade" else "w") as log:
        row = build_and_grade(name, path, work, timeout, log, mode, tasks, course, note, worker, case_timeout)
    with open(os.path.join(work, "row.json"), "w") as f:
        json.dump(row, f)
    return row


def build_and_grade(name, path, work, timeout, log, mode, tasks, course, note, worker, case_timeout):
    row = {"student": name, "total": 0.0, "flags": "", "sandbox": "", "gpu": worker.label()}
    notes = [note] if note else []
    built = os.path.join(work, "built.json")  # what the build step found, for a later --grade-only
    tree = os.path.join(work, "tree")
    submitted = os.path.join(work, "submitted")
    step = "build"
    try:
        if mode == "grade":
            if not os.path.exists(built):  # refused or broken at build time: that row stands
                with open(os.path.join(work, "row.json")) as f:
                    return json.load(f)
            with open(built) as f:
                b = json.load(f)
            taken, notes, row["sandbox"] = [tuple(t) for t in b["taken"]], b["notes"], b["sandbox"]
            graded = b.get("graded") or users_of({task_of(t) for t, _, _ in taken})  # a built.json written before "graded" was kept
        else:
            for stale in (built, os.path.join(work, "results.json"), os.path.join(work, "Results.md")):
                if os.path.exists(stale):
                    os.remove(stale)
            shutil.rmtree(tree, ignore_errors=True)
            unpack(path, work, notes)
            taken = student_files(submitted, notes)
            if not taken:
                row["flags"] = "; ".join(notes + ["no taskN/skeleton files of the course in the submission"])
                return row
            graded = users_of({task_of(t) for t, _, _ in taken})
            if tasks:
                graded = [t for t in graded if t in tasks]
            if not graded:
                row["flags"] = "; ".join(notes + [f"no files for the tasks graded ({', '.join(map(str, tasks))})"])
                return row
            print(f"taken: {', '.join(f'{t}/skeleton/{n}' for t, n, _ in taken)}; runners: {graded}", file=log, flush=True)
            if course:
                course.ensure(graded, timeout, worker)
            course_tree(tree, course.objects() if course else None)
            for task, file_name, src in taken:
                shutil.copyfile(src, os.path.join(tree, task, "skeleton", file_name))
            limit = build_timeout(course, graded, timeout)
            try:
                row["sandbox"], ok = build(tree, runner_targets(graded), log, limit, worker)
            except subprocess.TimeoutExpired:
                bound = "--timeout" if limit == timeout else "10× the course's own files' build time, and a minute"
                row["flags"] = "; ".join(notes + [f"the build took more than {limit} s ({bound}): a compile-time bomb?"])
                return row
            if not ok:
                log.flush()
                row["flags"] = "; ".join(notes + [build_failure(log.name)])
                return row
            with open(built, "w") as f:
                json.dump({"taken": taken, "graded": graded, "notes": notes, "sandbox": row["sandbox"]}, f)
            if mode == "build":
                row["flags"] = "; ".join(notes + ["built, not graded yet (--grade-only grades it)"])
                return row
        if tasks:
            graded = [t for t in graded if t in tasks]
        step = "grading"
        bins = os.path.join(tree, "build/skeleton/bin")
        cmd = [GRADER, "--rubric", RUBRIC, "--out", work, "--impl", name, "--root", submitted,
               "--bin-dir", bins, "--reference-bin-dir", REFERENCE_BINS] + worker.grader_args()
        if case_timeout:
            cmd += ["--timeout", str(case_timeout)]
        for t in graded:
            cmd += ["--task", str(t)]
            sources = sorted((d, f) for d in task_folders(t) if os.path.isdir(os.path.join(ROOT, d, "skeleton"))
                             for f in os.listdir(os.path.join(ROOT, d, "skeleton")) if f.endswith((".cpp", ".cu")))
            if sources:
                objs = [os.path.join(tree, "build/skeleton", d, "skeleton", os.path.splitext(f)[0] + ".o") for d, f in sources]
                cmd += ["--objects", f"{t}={','.join(objs)}"]
        env = {k: v for k, v in os.environ.items() if k not in ("ATTNLAB_RUNNER_DIR", "ATTNLAB_GPU_NODE")}
        env.setdefault("ATTNLAB_GOLDENS", os.path.join(ROOT, "goldens"))
        pin = worker.pin()
        env.update(pin)
        print(f"grade: {''.join(f'{k}={v} ' for k, v in pin.items())}{' '.join(shlex.quote(c) for c in cmd)}", file=log,
              flush=True)
        rc = run_limited(cmd, ROOT, log, timeout, env=env, preexec=worker.pinned())
        if rc != 0:
            row["flags"] = "; ".join(notes + [f"grader exited {rc}"])
            return row
        graded_row = summarise(name, work)
        graded_row["sandbox"] = row["sandbox"]
        graded_row["gpu"] = row["gpu"] or graded_row["gpu"]
        graded_row["flags"] = "; ".join(notes + ([graded_row["flags"]] if graded_row["flags"] else []))
        return graded_row
    except Refused as e:
        row["flags"] = "; ".join(notes + [f"refused: {e}"])
        return row
    except subprocess.TimeoutExpired:
        row["flags"] = "; ".join(notes + [f"{step} timed out after {timeout} s"])
        return row
    except (OSError, tarfile.TarError, shutil.Error, UnicodeError) as e:
        row["flags"] = "; ".join(notes + [f"unreadable submission: {e}"])
        return row


def summarise(name, work):
    with open(os.path.join(work, "results.json")) as f:
        res = json.load(f)
    row = {"student": name, "total": round(res["score"], 2), "flags": "", "gpu": res["extra_data"].get("gpu", "")}
    flags = []
    if res["extra_data"].get("edited_files"):
        flags.append("harness edited: " + " ".join(res["extra_data"]["edited_files"]))
    for t in res["tests"]:
        task = f"task{t['extra_data']['task']}"
        if task == "task0":
            continue
        if t["extra_data"].get("bonus"):  # a bonus part (e.g. 4b): its own column, not in the total
            task = "bonus"
        row[task] = row.get(task, 0.0) + t["score"]
        for fl in t["extra_data"].get("flags", []) or []:
            if fl not in flags:
                flags.append(fl)
    zeroed = res["extra_data"].get("edited_files") and res["score"] == 0  # the rubric zeroes an edited harness
    for key in row:
        if key.startswith("task") or key == "bonus":
            row[key] = 0.0 if zeroed else round(row[key], 2)
    row["flags"] = "; ".join(flags)
    return row


# ---- the class -------------------------------------------------------------------------------

def host_short_of(out, min_disk_gb, min_memory_gb):
    """What the host lacks to grade one more submission safely ("" when nothing): free disk where OUT is, and
    available memory. ATTNLAB_BATCH_FULL_AFTER=N pretends the disk is full after N submissions (a test of the stop)."""
    free = shutil.disk_usage(out).free / 2**30
    if (n := os.environ.get("ATTNLAB_BATCH_FULL_AFTER")) and host_short_of.graded >= int(n):
        free = 0.0
    if free < min_disk_gb:
        return f"only {free:.1f} GB free on the disk of {out} (at least {min_disk_gb:g} GB are kept free for a submission)"
    try:
        with open("/proc/meminfo") as f:
            avail = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:")) / 2**20
    except (OSError, StopIteration, ValueError):
        return ""
    if avail < min_memory_gb:
        return f"only {avail:.1f} GB of memory available (at least {min_memory_gb:g} GB are kept for a submission)"
    return ""


host_short_of.graded = 0
STOPPED = ".stopped"  # OUT/.stopped: the students a run that stopped had graded; the next run keeps their rows


def write_gradebook(out, rows, tasks=None):
    columns = {f"task{t}" for t in (tasks or rubric_tasks())} | {k for r in rows for k in r if k.startswith("task")}
    columns = sorted(columns, key=lambda k: int(k[4:]))
    path = os.path.join(out, "gradebook.csv")
    with open(path, "w", newline="") as f:
        bonus = ["bonus"] if any("bonus" in r for r in rows) else []  # scored apart from the total
        w = csv.DictWriter(f, fieldnames=["student"] + columns + ["total"] + bonus + ["flags", "sandbox", "gpu"], restval=0.0,
                           extrasaction="ignore")
        w.writeheader()
        for r in sorted(rows, key=lambda r: r["student"]):
            w.writerow({"sandbox": "", "gpu": "", **r})
    print(f"gradebook: {path} ({len(rows)} students)")


def write_slurm(args, subs):
    script = os.path.join(args.out, "grade_array.sbatch")
    me = os.path.abspath(__file__)
    out = os.path.abspath(args.out)
    cmd = ["/usr/bin/python3", me, "--submissions", os.path.abspath(args.submissions), "--out", out, "--timeout", str(args.timeout)]
    if args.tasks:
        cmd += ["--tasks", args.tasks]
    q = shlex.quote
    with open(script, "w") as f:
        f.write(f"""#!/bin/bash
#SBATCH --job-name=attnlab-grade
#SBATCH --array=0-{len(subs) - 1}
#SBATCH --gres={args.gres}
#SBATCH --cpus-per-task={args.cpus}
#SBATCH --mem={args.mem}
#SBATCH --time={args.time}
#SBATCH --output={out}/slurm-%A_%a.log
# One submission per array task; afterwards: {' '.join(q(c) for c in [me, '--collect', '--out', out])}
set -euo pipefail
cd {q(ROOT)}
{' '.join(q(c) for c in cmd)} --index "$SLURM_ARRAY_TASK_ID"
""")
    os.chmod(script, 0o755)
    print(f"slurm: wrote {script} ({len(subs)} array tasks); submit it with sbatch, then --collect")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--submissions")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/batch"))
    ap.add_argument("--timeout", type=int, default=3600, help="seconds to build, and to grade, one submission")
    ap.add_argument("--index", type=int, help="grade only the I-th submission (a Slurm array task)")
    ap.add_argument("--collect", action="store_true", help="merge OUT/*/row.json into OUT/gradebook.csv")
    ap.add_argument("--slurm", action="store_true", help="write a Slurm job array instead of grading here")
    ap.add_argument("--gres", default="gpu:h100:1")
    ap.add_argument("--cpus", default="8")
    ap.add_argument("--mem", default="64G")
    ap.add_argument("--time", default="02:00:00")
    ap.add_argument("--tasks", help="grade only these tasks, e.g. 4,5")
    ap.add_argument("--build-only", action="store_true", help="build the runners, grade nothing (a build machine)")
    ap.add_argument("--grade-only", action="store_true", help="grade runners an earlier --build-only built (a GPU node)")
    ap.add_argument("--min-free-disk-gb", type=float, default=4.0, help="stop, resumable, below this much free disk")
    ap.add_argument("--min-free-memory-gb", type=float, default=2.0, help="stop, resumable, below this much memory")
    ap.add_argument("--regrade", action="store_true", help="grade again the rows a stopped run had graded")
    ap.add_argument("--history", help="the file each grading appends its rows to, read by the class report "
                                      "(default OUT/history.jsonl)")
    ap.add_argument("--no-report", action="store_true", help="write the gradebook only: no OUT/report/, no history")
    ap.add_argument("--case-timeout", type=float, help="seconds a graded case may take (the grader's --timeout; default: "
                                                       "the rubric's case_timeout_s)")
    ap.add_argument("--gpus", help="grade on these GPUs at once, one worker each: 'all' or indices as nvidia-smi numbers "
                                   "them (0,1); each worker gets its GPU alone and a share of the CPU cores")
    ap.add_argument("--timing", choices=("alone", "beside"), default="alone",
                    help="with --gpus: 'alone' (the default) times each task with nothing else of the class running on the "
                         "node (fair: credit as on one GPU; a class whose grades are mostly timing gains little speed), "
                         "'beside' times while the other GPUs work (faster; a submission's speed credit may move by ~10 points)")
    ap.add_argument("--no-setup", action="store_true",
                    help="skip `make setup` (a GPU node without the course's packages, its goldens made there or carried)")
    args = ap.parse_args()
    tasks = sorted({int(t) for t in args.tasks.split(",") if t.strip()}) if args.tasks else None
    os.makedirs(args.out, exist_ok=True)
    if args.collect:
        rows = []
        for d in sorted(os.listdir(args.out)):
            p = os.path.join(args.out, d, "row.json")
            if not d.startswith(".") and os.path.exists(p):
                with open(p) as f:
                    rows.append(json.load(f))
        write_gradebook(args.out, rows, tasks)
        report(args)
        return 0
    if not args.submissions:
        ap.error("--submissions DIR is needed")
    subs = submissions(args.submissions)
    if args.index is None and not args.no_setup:  # what `make taskN` does first: packages, goldens (an array task uses what --slurm set up)
        subprocess.run(["make", "--no-print-directory", "setup", "SETUP_TASKS=" + " ".join(map(str, tasks or rubric_tasks()))],
                       cwd=ROOT, check=True)
    if args.gpus and (args.slurm or args.index is not None):
        ap.error("--gpus grades a class on the GPUs of this host; a Slurm array gives each of its tasks a GPU of its own "
                 "(--gres): use one or the other")
    if args.slurm:
        # The course's runners built once here, so that each array task compiles only its student's files.
        try:
            CourseBuild(args.out, may_build=True).ensure(tasks or rubric_tasks(), args.timeout)
        except (SystemExit, OSError, subprocess.SubprocessError) as e:
            print(f"slurm: the course's tree was not built ({e}); each array task builds the harness itself", file=sys.stderr)
        write_slurm(args, subs)
        return 0
    if args.index is not None and not 0 <= args.index < len(subs):
        ap.error(f"--index {args.index}: there are {len(subs)} submissions")
    chosen = [subs[args.index]] if args.index is not None else subs
    mode = "build" if args.build_only else "grade" if args.grade_only else "both"
    if mode != "build":
        ensure_grader()
    # An array task reads the course's tree if --slurm made it; a run over the class makes it.
    course = CourseBuild(args.out, may_build=args.index is None) if mode != "grade" else None
    if course and not course.may_build and not course.objects():
        course = None
    workers = make_workers(args.gpus, args.out if args.timing == "alone" else None)
    # A run that stopped for want of disk or memory left the students it had graded: their rows are kept.
    stopped = os.path.join(args.out, STOPPED)
    done = set()
    if os.path.exists(stopped) and not args.regrade and args.index is None:
        with open(stopped) as f:
            done = set(json.load(f))
        print(f"batch: resuming a run that stopped: {len(done)} rows kept (--regrade grades them again)", flush=True)
    rows, short = grade_class(chosen, done, args, mode, tasks, course, workers)
    if short:
        if args.index is None:
            with open(stopped, "w") as f:
                json.dump(sorted(r["student"] for r in rows), f)
            write_gradebook(args.out, rows, tasks)
        name, why = short
        print(f"batch: stopped before {name}: {why}. The {len(rows)} rows graded are kept; free the host and run the "
              f"same command again to go on from {name}.", file=sys.stderr, flush=True)
        return 3
    if args.index is None:
        write_gradebook(args.out, rows, tasks)
        report(args)
        if os.path.exists(stopped):
            os.remove(stopped)
    return 0


def report(args):
    """The class report, each student's page, one more grading in the history (tools/class/class_report.py)."""
    if args.no_report or args.build_only:
        return
    try:
        class_report.write_report(args.out, args.history)
    except (OSError, ValueError, KeyError) as e:  # the gradebook stands without its report
        print(f"batch: the class report was not written: {type(e).__name__}: {e}", file=sys.stderr)


def make_workers(spec, out):
    """One worker per GPU of --gpus, each with its share of the cores; without --gpus, one worker: the host. Workers of
    several GPUs share a timing window (out/.node-window) unless out is None (--timing beside): each times alone on the
    node (grader/node_window.h)."""
    if not spec:
        return [SERIAL]
    try:
        chosen = gpu_pool.choose(spec)
    except gpu_pool.GpuError as e:
        raise SystemExit(f"batch: {e}")
    cores = gpu_pool.split_cores(len(chosen))
    window = os.path.abspath(os.path.join(out, ".node-window")) if out and len(chosen) > 1 else None
    if window:
        os.makedirs(window, exist_ok=True)
    workers = [Worker(g, c, window) for g, c in zip(chosen, cores)]
    shared = len({c for w in workers for c in w.cores}) < sum(len(w.cores) for w in workers)
    for w in workers:
        print(f"batch: worker on {w.label()}, cores {','.join(map(str, w.cores))}", flush=True)
    if shared:
        print("batch: fewer CPU cores than GPUs: workers share cores, and one's builds may disturb another's timing",
              file=sys.stderr, flush=True)
    return workers


def grade_class(chosen, done, args, mode, tasks, course, workers):
    """Grades `chosen` (rows of `done` kept) by the workers, each taking the next submission as it finishes one: on one
    worker, in order. Returns (rows, None), or (rows graded, (student, why)) when the host ran short of disk or memory:
    the workers then finish what they hold and take nothing more. A worker's failure costs only its submission."""
    rows, queue, lock = [], [], threading.Lock()
    short = []
    for name, path, note in chosen:
        if name in done and os.path.exists(os.path.join(args.out, name, "row.json")):
            with open(os.path.join(args.out, name, "row.json")) as f:
                rows.append(json.load(f))
        else:
            queue.append((name, path, note))
    queue.reverse()  # pop() takes them in order

    def work(worker):
        while True:
            with lock:
                if short or not queue:
                    return
                name, path, note = queue.pop()
                why = host_short_of(args.out, args.min_free_disk_gb, args.min_free_memory_gb)
                if why:
                    short.append((name, why))
                    return
            try:
                row = grade_one(name, path, args.out, args.timeout, mode, tasks, course, note, worker, args.case_timeout)
            except Exception as e:  # a fault of the scheduler or the host, not of the submission: its row says so
                row = {"student": name, "total": 0.0, "flags": f"not graded: {type(e).__name__}: {e}", "sandbox": "",
                       "gpu": worker.label()}
            with lock:
                host_short_of.graded += 1
                where = f"  [GPU {worker.gpu['index']}]" if worker.gpu else ""
                print(f"  {name:<24} {row['total']:6.2f}{where}  {row['flags']}", flush=True)
                rows.append(row)

    if len(workers) == 1:
        work(workers[0])
    else:
        threads = [threading.Thread(target=work, args=(w,), name=f"gpu{w.gpu['index']}") for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return rows, (short[0] if short else None)


if __name__ == "__main__":
    sys.exit(main())
