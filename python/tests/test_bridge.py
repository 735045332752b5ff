#!/usr/bin/env python3
"""The Python bridge without a GPU (make test runs it): every argument check and its message, with
CPU torch tensors; the attnlab::attention operator's registration and fake kernel; the hf adapter's
refusals; how a missing library and a C++ error are reported; that `make python` builds, and that the package
installs (`pip install -e python/`, and the wheel) and finds its library without PYTHONPATH.

    /usr/bin/python3 python/tests/test_bridge.py [-v]       # from the repository root

The tests on a GPU are python/tests/test_bridge_gpu.py.
"""
import ctypes
import os
import subprocess
import sys
import unittest

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import attnlab  # noqa: E402
from attnlab import _library, hf  # noqa: E402

IMPL = "reference" if os.path.isdir(os.path.join(ROOT, "task4", "reference")) else "skeleton"  # the kit has no reference


def t(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


class Raises(unittest.TestCase):
    def check(self, exc, words, fn, *args, **kwargs):
        """fn(*args) raises `exc` whose message holds every one of `words`."""
        with self.assertRaises(exc) as cm:
            fn(*args, **kwargs)
        for w in words:
            self.assertIn(w, str(cm.exception))


class AttentionChecks(Raises):
    def test_not_a_tensor(self):
        self.check(TypeError, ["q:", "torch.Tensor", "list"], attnlab.attention, [1.0], t(1, 1, 4, 32), t(1, 1, 4, 32))

    def test_dtype(self):
        self.check(TypeError, ["k:", "float16", "float32"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 4, 32, dtype=torch.float16),
                   t(1, 1, 4, 32))

    def test_rank(self):
        self.check(ValueError, ["v:", "3 dimensions", "expected 4"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 4, 32), t(1, 4, 32))

    def test_not_contiguous(self):
        q = t(1, 4, 2, 32).transpose(1, 2)
        self.check(ValueError, ["q:", "not contiguous", "q.contiguous()"], attnlab.attention, q, t(1, 2, 4, 32), t(1, 2, 4, 32))

    def test_k_v_differ(self):
        self.check(ValueError, ["k and v", "differ"], attnlab.attention, t(1, 2, 4, 32), t(1, 2, 4, 32), t(1, 2, 5, 32))

    def test_heads_mismatch(self):
        self.check(ValueError, ["k:", "does not fit q", "heads"], attnlab.attention, t(1, 2, 4, 32), t(1, 3, 4, 32), t(1, 3, 4, 32))

    def test_head_dim(self):
        self.check(ValueError, ["q:", "head_dim", "80", "32, 64, 96, 128"], attnlab.attention, t(1, 1, 4, 80), t(1, 1, 4, 80),
                   t(1, 1, 4, 80))

    def test_no_keys(self):
        self.check(ValueError, ["k:", "0 keys"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 0, 32), t(1, 1, 0, 32))

    def test_causal_not_bool(self):
        self.check(TypeError, ["causal:", "bool"], attnlab.attention, t(1, 1, 4, 32), t(1, 1, 4, 32), t(1, 1, 4, 32), causal="yes")

    def test_device(self):  # everything else right, Sq ≠ Sk: only the device is wrong
        self.check(ValueError, ["q:", "is on cpu", "CUDA"], attnlab.attention, t(2, 3, 5, 64), t(2, 3, 9, 64), t(2, 3, 9, 64))

    def test_requires_grad(self):
        q = t(1, 1, 4, 32).requires_grad_()
        self.check(ValueError, ["q:", "requires grad", "no backward"], attnlab.attention, q, t(1, 1, 4, 32), t(1, 1, 4, 32))


class DecodeChecks(Raises):
    q, kc = t(2, 4, 1, 64), t(2, 4, 16, 64)

    def test_more_than_one_query(self):
        self.check(ValueError, ["q:", "2 queries"], attnlab.decode, t(2, 4, 2, 64), self.kc, self.kc, 3)

    def test_caches_differ(self):
        self.check(ValueError, ["k_cache and v_cache", "differ"], attnlab.decode, self.q, self.kc, t(2, 4, 17, 64), 3)

    def test_cache_does_not_fit_q(self):
        self.check(ValueError, ["k_cache:", "does not fit q"], attnlab.decode, self.q, t(2, 4, 16, 32), t(2, 4, 16, 32), 3)

    def test_cache_rank(self):
        self.check(ValueError, ["k_cache:", "3 dimensions"], attnlab.decode, self.q, t(2, 16, 64), self.kc, 3)

    def test_cache_dtype(self):
        self.check(TypeError, ["v_cache:", "float64"], attnlab.decode, self.q, self.kc, self.kc.double(), 3)

    def test_length_zero(self):
        self.check(ValueError, ["lengths:", "0", "outside 1 … max_seq (16)"], attnlab.decode, self.q, self.kc, self.kc, 0)

    def test_length_past_cache(self):
        self.check(ValueError, ["lengths:", "17", "max_seq (16)"], attnlab.decode, self.q, self.kc, self.kc, 17)

    def test_one_length_past_cache(self):
        self.check(ValueError, ["lengths:", "sequence 1"], attnlab.decode, self.q, self.kc, self.kc, [3, 40])

    def test_lengths_count(self):
        self.check(ValueError, ["lengths:", "3 given for a batch of 2"], attnlab.decode, self.q, self.kc, self.kc, [1, 2, 3])

    def test_lengths_float(self):
        self.check(TypeError, ["lengths:", "float"], attnlab.decode, self.q, self.kc, self.kc, 2.5)

    def test_lengths_bool(self):
        self.check(TypeError, ["lengths:", "bool"], attnlab.decode, self.q, self.kc, self.kc, True)

    def test_lengths_float_tensor(self):
        self.check(TypeError, ["lengths:", "torch.float32"], attnlab.decode, self.q, self.kc, self.kc, torch.tensor([1.0, 2.0]))

    def test_lengths_2d_tensor(self):
        self.check(ValueError, ["lengths:", "2 dimensions"], attnlab.decode, self.q, self.kc, self.kc, torch.ones(2, 1, dtype=torch.long))

    def test_device(self):  # per-sequence lengths as a tensor, all valid: only the device is wrong
        self.check(ValueError, ["q:", "is on cpu"], attnlab.decode, self.q, self.kc, self.kc, torch.tensor([3, 16]))

    def test_one_length_one_call(self):  # the lengths the library gets: one int (one launch) unless they differ
        from attnlab import _checks
        self.assertEqual(_checks.lengths_of(5, 2, 16), 5)
        self.assertEqual(_checks.lengths_of([7, 7], 2, 16), 7)
        self.assertEqual(_checks.lengths_of(torch.tensor(9), 3, 16), 9)
        self.assertEqual(_checks.lengths_of((3, 16), 2, 16), [3, 16])
        self.assertEqual(_checks.lengths_of(torch.tensor([1, 2, 2]), 3, 16), [1, 2, 2])


class SoftmaxGemmChecks(Raises):
    def test_softmax_scalar(self):
        self.check(ValueError, ["x:", "0-dimensional"], attnlab.softmax, torch.tensor(1.0))

    def test_softmax_no_columns(self):
        self.check(ValueError, ["x:", "last dimension is 0"], attnlab.softmax, t(3, 0))

    def test_softmax_dtype(self):
        self.check(TypeError, ["x:", "bfloat16"], attnlab.softmax, t(3, 4, dtype=torch.bfloat16))

    def test_softmax_not_contiguous(self):
        self.check(ValueError, ["x:", "not contiguous"], attnlab.softmax, t(4, 6)[:, ::2])

    def test_softmax_device(self):
        self.check(ValueError, ["x:", "is on cpu"], attnlab.softmax, t(3, 4, 5))

    def test_gemm_rank(self):
        self.check(ValueError, ["a:", "1 dimensions", "[M, K]"], attnlab.gemm, t(4), t(4, 2))

    def test_gemm_ranks_differ(self):
        self.check(ValueError, ["b:", "but a has 3"], attnlab.gemm, t(2, 3, 4), t(4, 5))

    def test_gemm_batch(self):
        self.check(ValueError, ["b:", "batch 3", "a's 2"], attnlab.gemm, t(2, 3, 4), t(3, 4, 5))

    def test_gemm_inner(self):
        self.check(ValueError, ["b:", "[K, N]", "K = 4"], attnlab.gemm, t(3, 4), t(5, 6))

    def test_gemm_nt_inner(self):
        self.check(ValueError, ["b:", "[N, K]", "K = 4"], attnlab.gemm, t(3, 4), t(4, 6), transpose_b=True)

    def test_gemm_transpose_not_bool(self):
        self.check(TypeError, ["transpose_b:", "bool"], attnlab.gemm, t(3, 4), t(4, 6), transpose_b=1)

    def test_gemm_device(self):
        self.check(ValueError, ["a:", "is on cpu"], attnlab.gemm, t(2, 3, 4), t(2, 5, 4), transpose_b=True)


class CustomOp(Raises):
    def test_registered(self):
        self.assertTrue(hasattr(torch.ops.attnlab, "attention"))
        self.assertIn(attnlab.REGISTERED_WITH, ("torch.library.custom_op", "torch.library.Library"))

    def test_fake_shape(self):  # the Meta/fake kernel: Sq ≠ Sk, output shaped as q
        q, k = torch.empty(2, 4, 5, 64, device="meta"), torch.empty(2, 4, 9, 64, device="meta")
        for causal in (False, True):
            o = torch.ops.attnlab.attention(q, k, k, causal)
            self.assertEqual((o.shape, o.device.type, o.dtype), (q.shape, "meta", torch.float32))

    def test_fake_checks_shapes(self):
        q = torch.empty(2, 4, 5, 80, device="meta")
        self.check(ValueError, ["head_dim", "80"], torch.ops.attnlab.attention, q, q, q, False)

    def test_cpu_device_error(self):
        self.check(ValueError, ["q:", "is on cpu"], attnlab.attention_op, t(1, 2, 3, 32), t(1, 2, 3, 32), t(1, 2, 3, 32))

    def test_no_backward(self):
        q = t(1, 2, 3, 32).requires_grad_()
        with self.assertRaises((RuntimeError, ValueError)) as cm:
            torch.ops.attnlab.attention(q, t(1, 2, 3, 32), t(1, 2, 3, 32), False)
        self.assertRegex(str(cm.exception), "backward|requires grad")


class HuggingFaceAdapter(Raises):
    class Module:
        is_causal = True

    def test_dropout(self):
        self.check(ValueError, ["dropout:", "eval()"], hf.attention_forward, self.Module(), t(1, 2, 3, 32), t(1, 2, 3, 32),
                   t(1, 2, 3, 32), None, dropout=0.1)

    def test_dtype(self):
        x = t(1, 2, 3, 32, dtype=torch.float16)
        self.check(TypeError, ["query:", "float16"], hf.attention_forward, self.Module(), x, x, x, None)

    def test_padding_mask_refused(self):
        allowed = torch.ones(4, 4, dtype=torch.bool).tril()
        allowed[:, 0] = False  # the first position is padding
        self.check(ValueError, ["attention_mask:", "padding"], hf._mask_is_causal, allowed[None, None], 4, 4)

    def test_causal_masks_recognised(self):
        Sq, Sk = 3, 7  # bottom-right: query i sees keys 0 … i + 4, as with a KV cache
        allowed = torch.arange(Sk)[None, :] <= torch.arange(Sq)[:, None] + (Sk - Sq)
        self.assertTrue(hf._mask_is_causal(allowed[None, None], Sq, Sk))
        additive = torch.zeros(1, 1, Sq, Sk).masked_fill(~allowed, torch.finfo(torch.float32).min)
        self.assertTrue(hf._mask_is_causal(additive, Sq, Sk))
        self.assertFalse(hf._mask_is_causal(torch.zeros(1, 1, Sq, Sk), Sq, Sk))

    def test_scaling(self):
        class GPT2Like:
            scale_attn_weights, scale_attn_by_inverse_layer_idx, layer_idx = True, True, 3
        self.assertAlmostEqual(hf._scaling(GPT2Like(), None, 64), 1 / 8 / 4)
        self.assertAlmostEqual(hf._scaling(self.Module(), 0.5, 64), 0.5)
        self.assertAlmostEqual(hf._scaling(self.Module(), None, 64), 1 / 8)

    def test_gqa_reaches_the_device_check(self):  # 4 query heads on 2 K/V heads: repeated, then refused for the CPU
        self.check(ValueError, ["is on cpu"], hf.attention_forward, self.Module(), t(1, 4, 3, 32), t(1, 2, 3, 32), t(1, 2, 3, 32), None)


class Library(unittest.TestCase):
    def test_missing_library_says_how_to_build(self):
        code = "import attnlab, torch; attnlab.load()"
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), ATTNLAB_LIB="", ATTNLAB_IMPL="no-such-impl")
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("FileNotFoundError", run.stderr)
        self.assertIn("make python IMPL=no-such-impl", run.stderr)

    def test_builds_and_reports_cxx_errors(self):
        """make python IMPL=reference (the kit: skeleton) builds; the library loads without a GPU; a C++
        exception or CUDA error comes back as RuntimeError with its message (no crash)."""
        run = subprocess.run(["make", "--no-print-directory", "python", f"IMPL={IMPL}"], cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:])
        path = os.path.join(ROOT, "build", IMPL, "python", "libattnlab.so")
        code = f"""
import ctypes, attnlab
from attnlab import _library
assert attnlab.impl() == {IMPL!r}, attnlab.impl()
try:  # head_dim 80 with null pointers: refused by the launcher, or (no GPU) by cudaSetDevice — either way a message
    _library.call("attention", 0, 0, None, None, None, None, 1, 1, 4, 4, 80, 0)
except RuntimeError as e:
    print("RuntimeError:", e)
"""
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), ATTNLAB_LIB=path)
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("RuntimeError: flash_attention_forward:", run.stdout)
        lib = ctypes.CDLL(path)
        for name in list(_library._SIGNATURES) + ["abi_version", "impl", "last_error", "device_count", "synchronize"]:
            self.assertTrue(hasattr(lib, "attnlab_" + name), name)


class Package(unittest.TestCase):
    """python/pyproject.toml: `pip install -e python/` and the wheel `make python` writes, each into a fresh venv
    (Debian's torch seen through --system-site-packages), offline; `import attnlab` there without PYTHONPATH finds
    its library: the checkout's build/<impl>/python/libattnlab.so, or the one inside the wheel."""

    @classmethod
    def setUpClass(cls):
        run = subprocess.run(["make", "--no-print-directory", "python", f"IMPL={IMPL}"], cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    def install(self, *what):
        """A venv with `what` pip-installed into it; returns its python."""
        import tempfile
        venv = tempfile.mkdtemp(prefix="attnlab-venv-")
        self.addCleanup(subprocess.run, ["rm", "-rf", venv])
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        run = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--disable-pip-version-check",
                              "--no-deps", "--no-index", "--no-build-isolation", *what], cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-2000:])
        return python

    def where(self, python, impl="no-such-impl"):
        """(library path, how chosen, the package's file) as `import attnlab` sees them from / without PYTHONPATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNLAB_LIB")}
        env["ATTNLAB_IMPL"] = impl
        run = subprocess.run([python, "-c", "import attnlab; print(*attnlab.library_path(), attnlab.impl(), attnlab.__file__, sep='|')"],
                             cwd="/", env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        return run.stdout.strip().split("|")

    def test_editable_install_finds_the_checkouts_library(self):
        path, how, impl, module = self.where(self.install("-e", "python/"), impl=IMPL)
        self.assertEqual((path, how, impl), (os.path.join(ROOT, "build", IMPL, "python", "libattnlab.so"), f"IMPL={IMPL}", IMPL))
        self.assertEqual(module, os.path.join(ROOT, "python", "attnlab", "__init__.py"))

    def test_wheel_carries_its_library(self):
        wheels = [f for f in os.listdir(os.path.join(ROOT, "build", IMPL, "python", "dist")) if f.endswith(".whl")]
        self.assertEqual(len(wheels), 1, wheels)
        self.assertRegex(wheels[0], r"^attnlab-[0-9.]+-py3-none-linux_[a-z0-9_]+\.whl$")  # a platform wheel: a .so inside
        python = self.install(os.path.join("build", IMPL, "python", "dist", wheels[0]))
        path, how, impl, module = self.where(python)  # ATTNLAB_IMPL names nothing here: the wheel's own library is used
        self.assertEqual((how, impl), ("in the package", IMPL))
        self.assertEqual(os.path.dirname(path), os.path.dirname(module))
        self.assertFalse(module.startswith(os.path.join(ROOT, "python")), module)


class SpeedupsIntoResults(unittest.TestCase):
    """tools/vs_torch/torch_speedups.py's tables go into the Task 4 and Task 5 sections of a graded Results.md,
    replacing an earlier run's, leaving the rest as it was."""

    def test_put_section(self):
        sys.path.insert(0, os.path.join(ROOT, "tools", "vs_torch"))
        import torch_speedups as ts
        md = "# Results\n\n## Task 4 — fused (4 / 4)\n\n| case |\n\n## Task 5 — decode (4 / 4)\n\ntext 5\n\n## Pictures\n"
        once = ts.put_section(md, 4, ts.HEADING + "\n\nrun 1")
        twice = ts.put_section(once, 4, ts.HEADING + "\n\nrun 2")
        self.assertEqual(twice.count(ts.HEADING), 1)
        self.assertIn("run 2", twice)
        self.assertNotIn("run 1", twice)
        self.assertLess(twice.index("| case |"), twice.index(ts.HEADING))
        self.assertLess(twice.index(ts.HEADING), twice.index("## Task 5"))
        self.assertTrue(twice.endswith("text 5\n\n## Pictures\n"))
        self.assertIsNone(ts.put_section(md, 6, "x"))  # no Task 6 section: nothing written


if __name__ == "__main__":
    unittest.main()
