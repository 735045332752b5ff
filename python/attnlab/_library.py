"""Finds and loads libattnlab.so (python/bridge.cpp) with ctypes, once, on the first kernel call.

Which library: $ATTNLAB_LIB when set, else build/<impl>/python/libattnlab.so in this repository with
<impl> from $ATTNLAB_IMPL (default "skeleton", as the Makefile's IMPL). Build it with
`make python IMPL=<impl>`. Nothing here runs at import time, so argument checks work on a machine
with neither the library nor a GPU.
"""
import ctypes
import os
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ABI_VERSION = 2  # python/bridge.cpp's attnlab_abi_version()
_ERR_LEN = 2048

_lock = threading.Lock()
_lib = None

_P, _I = ctypes.c_void_p, ctypes.c_int
_BUF = (ctypes.c_char_p, _I)
_SIGNATURES = {
    "attnlab_attention": (_I, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I) + _BUF,
    "attnlab_attention_lse": (_I, _P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I) + _BUF,
    "attnlab_attention_backward": (_I, _P, _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _I, _I, _I, _I) + _BUF,
    "attnlab_decode": (_I, _P, _P, _P, _P, _I, _I, _I, _I, _I) + _BUF,
    "attnlab_softmax": (_I, _P, _P, _I, _I) + _BUF,
    "attnlab_gemm_nn": (_I, _P, _P, _P, _I, _I, _I, _I) + _BUF,
    "attnlab_gemm_nt": (_I, _P, _P, _P, _I, _I, _I, _I) + _BUF,
    "attnlab_synchronize": (_I,) + _BUF,
    "attnlab_device_count": _BUF,
}


def library_path():
    """(path, how it was chosen) of the library that would be loaded."""
    env = os.environ.get("ATTNLAB_LIB")
    if env:
        return env, "ATTNLAB_LIB"
    impl = os.environ.get("ATTNLAB_IMPL", "skeleton")
    return os.path.join(ROOT, "build", impl, "python", "libattnlab.so"), f"IMPL={impl}"


def load():
    """The loaded library (ctypes.CDLL), loading it on the first call."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        path, how = library_path()
        if not os.path.isfile(path):
            impl = os.environ.get("ATTNLAB_IMPL", "skeleton")
            raise FileNotFoundError(
                f"attnlab: no bridge library at {path} ({how}); run `make python IMPL={impl}` in {ROOT} "
                f"(ATTNLAB_IMPL picks skeleton or reference), or set ATTNLAB_LIB to a libattnlab.so")
        # Task 4's launcher reads its tile table from task4/tuning.json: point it there, whatever the cwd.
        tuning = os.path.join(ROOT, "task4", "tuning.json")
        if os.path.isfile(tuning):
            os.environ.setdefault("ATTNLAB_TASK4_TUNING", tuning)
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeError(f"attnlab: cannot load {path} ({how}): {e}") from e
        lib.attnlab_abi_version.restype = ctypes.c_int
        if lib.attnlab_abi_version() != ABI_VERSION:
            raise RuntimeError(f"attnlab: {path} has interface version {lib.attnlab_abi_version()}, this package "
                               f"expects {ABI_VERSION}; rebuild it with `make python`")
        lib.attnlab_impl.restype = ctypes.c_char_p
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = list(argtypes), ctypes.c_int
        _lib = lib
        return lib


def impl():
    """Which implementation the loaded library was built from: "skeleton" or "reference"."""
    return load().attnlab_impl().decode()


def call(name, *args):
    """Calls attnlab_<name>(*args, err, len); a nonzero return raises RuntimeError with the C++ message."""
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = getattr(load(), "attnlab_" + name)(*args, err, _ERR_LEN)
    if rc != 0:
        raise RuntimeError(err.value.decode("utf-8", "replace") or f"attnlab_{name} failed (no message)")
    return rc


def device_count():
    """CUDA devices the library's runtime sees (0 when it sees none: no driver, no GPU)."""
    err = ctypes.create_string_buffer(_ERR_LEN)
    n = load().attnlab_device_count(err, _ERR_LEN)
    return max(n, 0)


def synchronize(device):
    """Waits for the library's kernels on `device`; a fault inside one raises RuntimeError."""
    call("synchronize", device)
