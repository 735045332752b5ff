"""The GPUs a class is graded on (`batch_grade.py --gpus all|0,1,…`): which exist, which are busy, and how one grading
worker is pinned to its own GPU and its own CPU cores.

A GPU is found by `nvidia-smi` (index, UUID, name, PCI bus id, the processes on it) and its device node,
/dev/nvidia<minor>, from /proc/driver/nvidia/gpus/<bus id>/information. A worker's grader runs with
CUDA_VISIBLE_DEVICES=<UUID> (the grader's own oracles, and the runners it starts, which keep that variable) and
ATTNLAB_GPU_NODE=/dev/nvidia<minor>: the runners' sandbox then binds that one GPU node and no other, so a runner that
rewrites CUDA_VISIBLE_DEVICES still sees one GPU (common/remote/sandbox.cpp).

ATTNLAB_TEST_GPUS=N pretends the host has N GPUs (no node, no UUID the driver knows), ATTNLAB_TEST_GPUS_BUSY=i,… that
some of them are in use: the scheduler's test on a machine without any (tools/class/check_batch.sh), grading the CPU
tasks.
"""
import os
import subprocess


class GpuError(Exception):
    """A GPU asked for is missing, busy or named twice: the run does not start."""


def _smi(query):
    try:
        p = subprocess.run(["nvidia-smi", f"--query-{query}", "--format=csv,noheader,nounits"], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GpuError(f"nvidia-smi did not answer ({e}): no GPU can be listed on this host")
    if p.returncode != 0:
        raise GpuError(f"nvidia-smi failed: {(p.stdout + p.stderr).strip()[:300]}")
    return [[c.strip() for c in line.split(",")] for line in p.stdout.splitlines() if line.strip()]


def _minor(bus_id):
    """The device node's minor number of the GPU at `bus_id` (nvidia-smi's 00000000:19:00.0), or None."""
    domain, rest = bus_id.lower().split(":", 1)
    for name in (f"{domain[-4:]}:{rest}", f"{domain}:{rest}"):
        try:
            with open(f"/proc/driver/nvidia/gpus/{name}/information") as f:
                for line in f:
                    if line.startswith("Device Minor:"):
                        return int(line.split(":", 1)[1])
        except (OSError, ValueError):
            continue
    return None


def host_gpus():
    """Every GPU of this host: dicts of index, uuid, name, bus_id, node (/dev/nvidiaN or None), busy (what runs on it)."""
    if n := os.environ.get("ATTNLAB_TEST_GPUS"):
        busy = {int(i) for i in os.environ.get("ATTNLAB_TEST_GPUS_BUSY", "").split(",") if i.strip()}
        return [{"index": i, "uuid": f"TEST-GPU-{i}", "name": "test GPU (none: the CPU tasks only)", "bus_id": "",
                 "node": None, "busy": "pid 4242 (python3, 20480 MiB)" if i in busy else ""} for i in range(int(n))]
    gpus = [{"index": int(i), "uuid": u, "name": name, "bus_id": bus, "node": None, "busy": ""}
            for i, u, name, bus in _smi("gpu=index,uuid,name,pci.bus_id")]
    for g in gpus:
        if (m := _minor(g["bus_id"])) is not None and os.path.exists(f"/dev/nvidia{m}"):
            g["node"] = f"/dev/nvidia{m}"
    by_uuid = {g["uuid"]: g for g in gpus}
    for uuid, pid, name, mib in _smi("compute-apps=gpu_uuid,pid,process_name,used_memory"):
        if uuid in by_uuid:
            g = by_uuid[uuid]
            g["busy"] += ("; " if g["busy"] else "") + f"pid {pid} ({os.path.basename(name)}, {mib} MiB)"
    return gpus


def choose(spec):
    """The GPUs `--gpus spec` names ("all", or indices "0,2"), each checked: present, not busy, named once."""
    gpus = host_gpus()
    if spec.strip() == "all":
        if not gpus:
            raise GpuError("--gpus all: this host has no GPU (nvidia-smi lists none)")
        chosen = gpus
    else:
        try:
            wanted = [int(x) for x in spec.split(",") if x.strip()]
        except ValueError:
            raise GpuError(f"--gpus {spec!r}: give 'all' or GPU indices as nvidia-smi numbers them, e.g. 0,1")
        if not wanted:
            raise GpuError(f"--gpus {spec!r}: no GPU named")
        twice = sorted({i for i in wanted if wanted.count(i) > 1})
        if twice:
            raise GpuError(f"--gpus {spec!r}: GPU {', '.join(map(str, twice))} named twice (two workers never share a GPU)")
        have = {g["index"]: g for g in gpus}
        missing = [i for i in wanted if i not in have]
        if missing:
            listed = ", ".join(str(g["index"]) for g in gpus) or "none"
            raise GpuError(f"--gpus {spec!r}: GPU {', '.join(map(str, missing))} not on this host (it has: {listed})")
        chosen = [have[i] for i in wanted]
    busy = [g for g in chosen if g["busy"]]
    if busy:
        raise GpuError("; ".join(f"GPU {g['index']} ({g['name']}) is busy: {g['busy']}" for g in busy) +
                       " — its timings would be unfair; free it, or leave it out of --gpus")
    return chosen


def label(gpu):
    """How the gradebook and a student's report name the GPU that graded them."""
    where = f", PCI {gpu['bus_id']}" if gpu["bus_id"] else ""
    return f"GPU {gpu['index']}: {gpu['name']}{where}"


def split_cores(n_workers, cores=None):
    """Each worker's CPU cores: this process's cores dealt out in contiguous runs, so that one worker's builds and host
    work do not run on another's cores. With fewer cores than workers, workers share (and the caller says so)."""
    cores = sorted(cores if cores is not None else os.sched_getaffinity(0))
    if len(cores) < n_workers:
        return [[cores[i % len(cores)]] for i in range(n_workers)]
    per, extra = divmod(len(cores), n_workers)
    out, start = [], 0
    for w in range(n_workers):
        n = per + (1 if w < extra else 0)
        out.append(cores[start:start + n])
        start += n
    return out


def worker_env(gpu):
    """What a worker's grader runs with: its GPU alone (by UUID), and the node its runners' sandbox may bind."""
    env = {"CUDA_VISIBLE_DEVICES": gpu["uuid"], "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    if gpu["node"] and os.environ.get("ATTNLAB_PIN_GPU_NODE", "1") != "0":
        env["ATTNLAB_GPU_NODE"] = gpu["node"]
    return env
