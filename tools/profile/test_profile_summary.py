#!/usr/bin/env python3
"""Tests of tools/profile/profile_summary.py (run by tools/ci/run_tests.sh; no GPU, no ncu).

The fixture tools/profile/testdata/ncu_raw_task5.csv is hand-made, not captured from ncu: it follows the layout
ncu documents for `--csv --page raw` (a header row of column names, a row of units, one row per kernel;
numbers with thousands separators), with a line of ncu's own output before the table, two kernels (a
split-KV decode and its merge), DRAM throughput missing and local loads given in sectors — so the
parser's tolerance is what is tested, not any real kernel's figures.
"""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_summary as ps  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "ncu_raw_task5.csv")


class ProfileSummaryTest(unittest.TestCase):
    def test_reads_kernels_and_units(self):
        ks = ps.read_kernels(FIXTURE)
        self.assertEqual(len(ks), 2)
        self.assertIn("decode_partial_kernel", ks[0]["Kernel Name"][0])
        self.assertEqual(ps.value(ks[0], "gpu__time_duration.sum", "time"), 1234567)
        self.assertEqual(ps.value(ks[0], "launch__shared_mem_per_block_static", "bytes"), 33280)

    def test_missing_metric_is_na(self):
        k = ps.read_kernels(FIXTURE)[0]
        self.assertIsNone(ps.value(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed", "pct"))
        self.assertIsNone(ps.value(k, "launch__waves_per_multiprocessor", "float"))
        self.assertEqual(ps.fmt(None, "pct"), "n/a")

    def test_fallback_sectors_to_bytes(self):
        k = ps.read_kernels(FIXTURE)[0]
        self.assertEqual(ps.value(k, "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "bytes"), 128 * 32)

    def test_limiter(self):
        ks = ps.read_kernels(FIXTURE)
        self.assertEqual(ps.limiter(ks[0]), "registers (3 blocks/SM)")
        self.assertEqual(ps.limiter(ks[1]), "registers and warps (threads per block) (16 blocks/SM)")
        self.assertEqual(ps.limiter({}), "n/a")

    def test_summary_text(self):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = ps.main(["--task", "5", "--yours", FIXTURE, "--reference-note", "no reference here"])
        text = out.getvalue()
        self.assertEqual(rc, 0)
        for want in ("Task 5: Nsight Compute summary, 2 kernels", "reference: no reference here",
                     "kernel 1: void decode_partial_kernel<128>", "grid (17, 32, 1)", "1.235 ms",
                     "DRAM throughput, % of peak", "n/a", "47.9 %", "33.3 KB", "registers (3 blocks/SM)",
                     "-> local-memory traffic", "25 % of wavefronts are bank conflicts", "kernel 2: void decode_merge_kernel<128>",
                     "4.3 us", "all 2 kernels: 1.239 ms"):
            self.assertIn(want, text)

    def test_with_reference_and_without_units_row(self):
        with open(FIXTURE, encoding="utf-8") as f:
            lines = f.read().splitlines()
        ref = "\n".join([lines[1]] + lines[3:4]) + "\n"  # header and the first kernel only, no units row
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as t:
            t.write(ref)
        try:
            self.assertEqual(len(ps.read_kernels(t.name)), 1)
            text = "\n".join(ps.summary(4, ps.read_kernels(FIXTURE), ps.read_kernels(t.name)))
            self.assertIn("reference's kernel 1: void decode_partial_kernel<128>", text)
            self.assertIn("reference's kernel 2: (none at this position)", text)
            self.assertIn("reference: registers (3 blocks/SM)", text)
        finally:
            os.unlink(t.name)

    def test_empty_and_garbage(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as t:
            t.write("==PROF== No kernels were profiled.\n")
        try:
            self.assertEqual(ps.read_kernels(t.name), [])
            self.assertIn("no kernel was profiled", "\n".join(ps.summary(4, [])))
        finally:
            os.unlink(t.name)

    def test_metric_list(self):
        out = io.StringIO()
        with redirect_stdout(out):
            ps.main(["--metric-list"])
        names = out.getvalue().strip().split(",")
        self.assertIn("launch__occupancy_limit_shared_mem", names)
        self.assertEqual(len(names), len(set(names)))


if __name__ == "__main__":
    unittest.main(verbosity=1)
