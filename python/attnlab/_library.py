"""Finds and loads libattnlab.so (python/bridge.cpp) with ctypes, once, on the first kernel call.

Which library, the first that applies:
  1. $ATTNLAB_LIB, a path;
  2. libattnlab.so inside this package: the wheel `make python` writes carries the library it was built with;
  3. build/<impl>/python/libattnlab.so of the repository this package sits in (an editable install,
     `pip install -e python/`, or PYTHONPATH=python), <impl> from $ATTNLAB_IMPL (default "skeleton", as the
     Makefile's IMPL). Build it with `make python IMPL=<impl>`.
Nothing here runs at import time, so argument checks work on a machine with neither the library nor a GPU.
"""
import ctypes
import os
import threading

PACKAGE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(PACKAGE))  # the repository, when the package is python/attnlab in one
ABI_VERSION = 5  # python/bridge.cpp's attnlab_abi_version()
_ERR_LEN = 4096

_lock = threading.Lock()
_lib = None
_fns = None  # "attention" → the library's attnlab_attention, … (set once, read without the lock)

_P, _I = ctypes.c_void_p, ctypes.c_int
_SIGNATURES = {  # after (device, stream): python/bridge.cpp's arguments
    "attention": (_P, _P, _P, _P, _I, _I, _I, _I, _I, _I),
    "attention_lse": (_P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I),
    "attention_backward": (_P, _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I),
    "attention_bf16": (_P, _P, _P, _P, _I, _I, _I, _I, _I, _I),
    "attention_lse_bf16": (_P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I),
    "attention_backward_bf16": (_P, _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I),
    "decode": (_P, _P, _P, _P, _I, _I, _I, _I, _I),
    "decode_rows": (_P, _P, _P, _P, _I, _I, _I, _P, _I),
    "paged_decode_bf16": (_P, _P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I, _I),
    "softmax": (_P, _P, _I, _I),
    "gemm_nn": (_P, _P, _P, _I, _I, _I, _I),
    "gemm_nt": (_P, _P, _P, _I, _I, _I, _I),
}


def library_path():
    """(path, how it was chosen) of the library that would be loaded."""
    env = os.environ.get("ATTNLAB_LIB")
    if env:
        return env, "ATTNLAB_LIB"
    packaged = os.path.join(PACKAGE, "libattnlab.so")
    if os.path.isfile(packaged):
        return packaged, "in the package"
    impl = os.environ.get("ATTNLAB_IMPL", "skeleton")
    return os.path.join(ROOT, "build", impl, "python", "libattnlab.so"), f"IMPL={impl}"


def load():
    """The loaded library (ctypes.CDLL), loading it on the first call."""
    return _load()[0]


def _load():
    global _lib, _fns
    with _lock:
        if _lib is not None:
            return _lib, _fns
        path, how = library_path()
        if not os.path.isfile(path):
            impl = os.environ.get("ATTNLAB_IMPL", "skeleton")
            raise FileNotFoundError(
                f"attnlab: no bridge library at {path} ({how}); run `make python IMPL={impl}` in {ROOT} "
                f"(ATTNLAB_IMPL picks skeleton or reference), or set ATTNLAB_LIB to a libattnlab.so")
        # Task 4's launcher reads its tile table from task4/tuning.json (a wheel carries a copy): point it there,
        # whatever the cwd.
        for tuning in (os.path.join(os.path.dirname(path), "tuning.json"), os.path.join(ROOT, "task4", "tuning.json")):
            if os.path.isfile(tuning):
                os.environ.setdefault("ATTNLAB_TASK4_TUNING", tuning)
                break
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeError(f"attnlab: cannot load {path} ({how}): {e}") from e
        lib.attnlab_abi_version.restype = ctypes.c_int
        if lib.attnlab_abi_version() != ABI_VERSION:
            raise RuntimeError(f"attnlab: {path} has interface version {lib.attnlab_abi_version()}, this package "
                               f"expects {ABI_VERSION}; rebuild it with `make python`")
        lib.attnlab_impl.restype = ctypes.c_char_p
        lib.attnlab_last_error.argtypes, lib.attnlab_last_error.restype = [ctypes.c_char_p, _I], _I
        lib.attnlab_device_count.argtypes, lib.attnlab_device_count.restype = [], _I
        lib.attnlab_synchronize.argtypes, lib.attnlab_synchronize.restype = [_I], _I
        fns = {}
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, "attnlab_" + name)
            fn.argtypes, fn.restype = [_I, _P] + list(argtypes), _I
            fns[name] = fn
        _lib, _fns = lib, fns
        return lib, fns


def impl():
    """Which implementation the loaded library was built from: "skeleton" or "reference"."""
    return load().attnlab_impl().decode()


def last_error(what):
    """This thread's last message from the library."""
    err = ctypes.create_string_buffer(_ERR_LEN)
    load().attnlab_last_error(err, _ERR_LEN)
    return err.value.decode("utf-8", "replace") or f"{what} failed (no message)"


def call(name, device, stream, *args):
    """attnlab_<name>(device, stream, *args): the kernel launched on the legacy default stream of `device`, ordered
    with `stream` (torch's current one: _streams.current) in the same C call; a nonzero return raises RuntimeError
    with the C++ message."""
    fns = _fns or _load()[1]
    if fns[name](device, stream, *args):
        raise RuntimeError(last_error("attnlab_" + name))


def kernel_for(name, x):
    """The library function `name` for x's dtype: name_bf16 (Task 4's bf16 parts) for bfloat16 tensors, else name."""
    import torch
    return name + "_bf16" if x.dtype == torch.bfloat16 else name


def device_count():
    """CUDA devices the library's runtime sees (0 when it sees none: no driver, no GPU)."""
    return max(load().attnlab_device_count(), 0)


def synchronize(device):
    """Waits for the library's kernels on `device`; a fault inside one raises RuntimeError."""
    if load().attnlab_synchronize(device):
        raise RuntimeError(last_error("attnlab_synchronize"))
