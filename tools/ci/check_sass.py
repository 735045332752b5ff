#!/usr/bin/env python3
"""check_sass.py — the machine code of the reference's CUDA objects reads no uniform register that nothing writes.

CUDA 13.0's ptxas encoded some cp.async instructions (LDGSTS) that add a uniform-register offset to their shared
address and carry an L2 cache hint with registers UR0 and UR1, which no instruction of the kernel writes: an illegal
instruction at run time, and only on the paths that reach it (5b's four-stage decode, docs/perf.md, "An illegal
instruction in 5b's four-stage decode"). Tests on one GPU take one path; this reads every kernel of every
architecture built, with cuobjdump and nvdisasm (from PyPI: tools/setup/fetch_assets.sh).

  check_sass.py OBJECT_ROOT …     every OBJECT_ROOT/**/X.o built from a X.cu of the repository (not the negative
                                  controls' and exploits' copies): make test gives build/reference and build/common
  check_sass.py --self-test       the parser on tools/ci/fixtures/unwritten_uniform.sass: must flag one kernel

Exit 0: none found; 1: some (each named: object, architecture, kernel, instruction); 77: no cuobjdump or nvdisasm.
"""
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = [ROOT / ".deps" / "cuda-tools" / "nvidia" / "cu13" / "bin", pathlib.Path("/usr/local/cuda/bin")]
FIXTURE = ROOT / "tools" / "ci" / "fixtures" / "unwritten_uniform.sass"

ARCH = re.compile(r"^\s*arch = (sm_\d+)")
FUNCTION = re.compile(r"^\s*Function : (\S+)")
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
PREDICATE = re.compile(r"^@!?U?P\w+\s+")
# Uniform registers an instruction reads as a memory descriptor (desc[URn] of a load, store or cp.async; not a wgmma's
# gdesc[URn], whose A half goes unread when A comes from registers) or as an address's offset ([R+URn]).
READS = re.compile(r"(?<![a-z])desc\[UR(\d+)\]|\+UR(\d+)\b")


def tool(name):
    for d in TOOLS:
        if (d / name).is_file():
            return str(d / name)
    return shutil.which(name)


def written_uniform(instruction):
    """The uniform registers an instruction writes: its first operand, when the opcode is a uniform one."""
    body = PREDICATE.sub("", instruction)
    op, _, args = body.partition(" ")
    if not (op.startswith("U") or op.startswith(("S2UR", "R2UR", "LDCU", "REDUX", "VOTEU", "CS2UR"))):
        return set()
    m = re.match(r"\s*UR(\d+)\b", args)
    if not m:
        return set()
    n = int(m.group(1))
    wide = ".64" in op or ".128" in op
    return {n, n + 1} if wide else {n}


def problems(listing):
    """(arch, kernel, instruction) for each instruction reading a uniform register that its kernel never writes."""
    found, arch, kernels = [], "?", []
    for line in listing.splitlines():
        m = ARCH.match(line)
        if m:
            arch = m.group(1)
            continue
        m = FUNCTION.match(line)
        if m:
            kernels.append((arch, m.group(1), []))
            continue
        m = INSTRUCTION.match(line)
        if m and kernels:
            kernels[-1][2].append(m.group(1))
    for arch, name, code in kernels:
        written = set().union(*map(written_uniform, code)) if code else set()
        for ins in code:
            for a, b in READS.findall(ins):
                if int(a or b) not in written:
                    found.append((arch, name, ins))
                    break
    return found


def source_of(obj):
    """The repository's X.cu an object X.o was built from: the longest tail of its path that names one
    (build/common/cuda/x.o: common/cuda/x.cu). Not the controls' and exploits' known-bad copies (build/…, grader/exploits/)."""
    parts = obj.resolve().with_suffix(".cu").parts
    for i in range(1, len(parts)):
        rel = pathlib.PurePath(*parts[i:])
        if (ROOT / rel).is_file():
            return None if rel.parts[0] == "build" or rel.parts[:2] == ("grader", "exploits") else rel
    return None


def disassemble(obj, cuobjdump, env):
    r = subprocess.run([cuobjdump, "-sass", str(obj)], capture_output=True, text=True, env=env)
    if r.returncode != 0 and "does not contain device code" not in r.stderr:
        return obj, None, r.stderr.strip()
    return obj, r.stdout, ""


def main():
    if sys.argv[1:] == ["--self-test"]:
        found = problems(FIXTURE.read_text())
        kernels = {k for _, k, _ in found}
        print(f"fixture: {len(found)} flagged in {len(kernels)} kernel(s): {sorted(kernels)}")
        ok = kernels == {"bad_kernel"}
        print("self-test passed" if ok else "self-test FAILED: expected exactly bad_kernel flagged")
        return 0 if ok else 1
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cuobjdump, nvdisasm = tool("cuobjdump"), tool("nvdisasm")
    if not cuobjdump or not nvdisasm:
        print("skipped: cuobjdump or nvdisasm not found (tools/setup/fetch_assets.sh puts them in .deps/cuda-tools)")
        return 77
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    objects = [obj for base in sys.argv[1:] for obj in sorted(pathlib.Path(base).rglob("*.o")) if source_of(obj)]
    bad, kernels = 0, 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for obj, listing, err in pool.map(lambda o: disassemble(o, cuobjdump, env), objects):
            if listing is None:
                print(f"{obj}: cuobjdump failed: {err}")
                bad += 1
                continue
            kernels += listing.count("Function : ")
            for arch, name, ins in problems(listing):
                print(f"{obj} {arch} {name}: {ins}  <- reads a uniform register no instruction of the kernel writes")
                bad += 1
    print(f"{len(objects)} objects, {kernels} kernels (all architectures): {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
