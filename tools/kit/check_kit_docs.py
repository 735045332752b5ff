#!/usr/bin/env python3
"""Checks that every command and path the student kit's Markdown names exists in the kit.

    tools/kit/check_kit_docs.py build/release/attnlab-kit [--allow tools/kit/kit_docs_allow.txt]

Reads every *.md under the kit (README.md, taskN/README.md, docs/*.md; not build/, goldens/,
models/ or .deps/) and checks:
  - each `make …` invocation (in code: `inline`, indented or fenced blocks): its targets, with its
    variables, must be something the kit's Makefile can do (`make -n` succeeds in the kit), and an
    IMPL= value must be an implementation the kit holds (taskN/<impl>/);
  - each repository path (task4/skeleton/flash_attention.cu, docs/perf.md, grader/rubric.json,
    task1/controls/…, links) must exist in the kit; `taskN` stands for any task, `…` and `*` for
    whatever is inside the folder;
  - phrases that point into files the kit does not have (the reference's notes).
A paragraph of a file that says "not in the student kit" declares the `code` it names (course-only
paths, `IMPL=reference`) as the course repository's: those are not looked for in that file.
Prints one `file:line: problem` per finding and exits 1 if any is not in the allow-list, a file of
`file: text` lines (`text` as printed between the quotes; # comments and blank lines ignored).
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = {"build", "goldens", "models", ".deps", ".git"}
# A path the docs may name: it starts with one of the course repository's top-level entries.
TOP = r"(?:common|docs|grader|tools|task[1-9N]|\.ci)"
PATH_RE = re.compile(r"(?<![\w/.$<>-])(" + TOP + r"/[\w./…*<>{}|+-]*|Makefile)(?![\w/])")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
MAKE_RE = re.compile(r"(?<![\w/.-])make\s+([^`#;&|]*)")
# Wording that sends the reader to files only the course repository has.
PHRASES = [(re.compile(r"the reference'?s (notes|comments|code|source)", re.I), "points into the reference, which the kit does not have")]
GENERATED = ("build/", "goldens/", "models/", ".deps/")
NOT_IN_KIT = "not in the student kit"


def md_files(kit):
    for dirpath, dirnames, filenames in os.walk(kit):
        rel = os.path.relpath(dirpath, kit)
        dirnames[:] = sorted(d for d in dirnames if not (rel == "." and d in SKIP_DIRS))
        for f in sorted(filenames):
            if f.endswith(".md"):
                yield os.path.join(dirpath, f)


def code_spans(lines):
    """(line number, text) of the code in a Markdown file: fenced blocks, indented blocks, `spans`."""
    fenced = False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") or line.startswith("\t"):
            yield n, line
            continue
        for m in re.finditer(r"`([^`]+)`", line):
            yield n, m.group(1)


def path_exists(kit, p):
    p = p.rstrip(".,;:)")
    if p.startswith(GENERATED):
        return True
    if any(c in p for c in "<>{}|"):
        return True  # a template (build/<impl>/…, {a,b}): not a path to check
    p = p.replace("…", "*").replace("...", "*")
    p = re.sub(r"\btaskN\b", "task[0-9]", p)
    p = re.sub(r"(?<=task)N(?=[/._-])", "[0-9]", p)
    p = re.sub(r"\*+$", "*", p)
    if p.endswith("/*") or p.endswith("/"):
        return bool(glob.glob(os.path.join(kit, p.rstrip("*").rstrip("/"))))
    return bool(glob.glob(os.path.join(kit, p)))


def parse_make(args):
    """(targets, variables) of the words after `make`; None when it is not a command."""
    args = args.strip()
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    targets, variables = [], {}
    for w in words:
        if w in ("…", "...") or "…" in w:
            break  # "make task1 …": the rest is prose
        if w.startswith("-"):
            continue
        if "=" in w:
            k, v = w.split("=", 1)
            if re.fullmatch(r"[A-Z_][A-Z0-9_]*", k):
                variables[k] = v
            continue
        if not re.fullmatch(r"[A-Za-z0-9_./%-]+", w):
            break
        targets.append(w)
    return targets, variables


def expand_placeholders(target):
    """`taskN`, `bench-taskN`: each real task number instead of N."""
    if re.search(r"task[N]\b", target):
        return [re.sub(r"task[N]\b", f"task{i}", target) for i in range(1, 8)], True
    return [target], False


class MakeChecker:
    def __init__(self, kit):
        self.kit, self.cache = kit, {}
        self.impls = sorted({os.path.basename(d) for d in glob.glob(os.path.join(kit, "task[0-9]*", "*"))
                             if os.path.isdir(d) and os.path.basename(d) not in ("controls",)})

    def ok(self, targets, variables):
        key = (tuple(targets), tuple(sorted(variables.items())))
        if key not in self.cache:
            env = dict(os.environ)
            for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
                env.pop(k, None)
            cmd = ["make", "-n", "--no-print-directory", "-C", self.kit] + list(targets) + \
                  [f"{k}={v}" for k, v in variables.items()]
            try:
                p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
                err = [l for l in p.stderr.splitlines() if l.strip()]
                self.cache[key] = "" if p.returncode == 0 else (err[-1] if err else f"exit {p.returncode}")
            except subprocess.TimeoutExpired:
                self.cache[key] = "make -n timed out"
        return self.cache[key]


def check(kit):
    problems = []  # (file, line, text, message)
    mk = MakeChecker(kit)
    for path in md_files(kit):
        rel = os.path.relpath(path, kit)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        seen = set()

        def report(n, text, msg):
            if (n, text) not in seen:
                seen.add((n, text))
                problems.append((rel, n, text, msg))

        # A paragraph saying "not in the student kit" declares what it names (in `code`) as the course's
        # only: those paths, and IMPL= values, are not looked for in the kit anywhere in this file.
        declared = set()
        for para in re.split(r"\n\s*\n", "\n".join(lines)):
            para = " ".join(para.split())
            if NOT_IN_KIT in para:
                declared.update(t.rstrip("/…").rstrip("/") for t in re.findall(r"`([^`]+)`", para))

        def is_declared(p):
            p = p.rstrip(".,;:)").replace("…", "").rstrip("/")
            return any(p == d or p.startswith(d + "/") for d in declared)

        for n, code in code_spans(lines):
            for m in MAKE_RE.finditer(re.sub(r"\s{2,}(?=make\s)", " ; ", code)):
                targets, variables = parse_make(m.group(1))
                text = ("make " + m.group(1).strip()).rstrip()
                impl = variables.get("IMPL")
                if impl is not None:
                    for value in impl.split("|"):
                        if value not in mk.impls and not is_declared(f"IMPL={value}"):
                            report(n, text, f"IMPL={value}: the kit has no task*/{value}/ (it has: {', '.join(mk.impls)})")
                    variables = {k: v for k, v in variables.items() if k != "IMPL"}
                for t in targets:
                    if "|" in t:
                        continue
                    expanded, placeholder = expand_placeholders(t)
                    results = [mk.ok([e], variables) for e in expanded]
                    if placeholder and any(r == "" for r in results):
                        continue
                    if not placeholder and results[0] == "":
                        continue
                    report(n, text, f"make target '{t}' does not work in the kit: {results[0]}")
        for n, line in enumerate(lines, 1):
            for m in PATH_RE.finditer(line):
                p = m.group(1)
                if not path_exists(kit, p) and not is_declared(p):
                    report(n, p, f"path '{p}' is not in the kit")
            for m in LINK_RE.finditer(line):
                target = m.group(1).split("#")[0]
                if not target or re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                resolved = os.path.normpath(os.path.join(os.path.dirname(rel), target))
                if resolved.startswith(".."):
                    report(n, target, f"link '{target}' leaves the kit")
                elif not path_exists(kit, resolved):
                    report(n, target, f"link '{target}' ({resolved}) is not in the kit")
            for rx, why in PHRASES:
                for m in rx.finditer(line):
                    report(n, m.group(0), f"'{m.group(0)}' {why}")
    return problems


def read_allow(path):
    allowed = set()
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#") and ": " in line:
                    file, text = line.split(": ", 1)
                    allowed.add((file.strip(), text.strip()))
    return allowed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kit", help="the kit folder (build/release/attnlab-kit)")
    ap.add_argument("--allow", default=os.path.join(ROOT, "tools", "kit", "kit_docs_allow.txt"),
                    help="allow-list of 'file: text' lines (default: tools/kit/kit_docs_allow.txt)")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.kit, "Makefile")):
        print(f"check-kit-docs: {args.kit} is not a kit (no Makefile)")
        return 2
    allowed = read_allow(args.allow)
    problems = check(args.kit)
    bad = allowed_count = 0
    for file, n, text, msg in problems:
        if (file, text) in allowed:
            allowed_count += 1
            continue
        bad += 1
        print(f"{file}:{n}: {msg}  [\"{text}\"]")
    files = len(list(md_files(args.kit)))
    extra = f", {allowed_count} allowed by {os.path.relpath(args.allow, ROOT)}" if allowed_count else ""
    print(f"check-kit-docs: {bad} problem{'s' if bad != 1 else ''} in {files} Markdown files of the kit{extra}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
