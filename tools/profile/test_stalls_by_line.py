#!/usr/bin/env python3
"""Tests of tools/profile/stalls_by_line.py (run by tools/ci/run_tests.sh; no GPU, no ncu).

The fixture tools/profile/testdata/ncu_source_bwd.csv is cut from a real `ncu --page source --csv --print-source
cuda,sass` export of 4d's Hopper backward (Nsight Compute on an H100): two file blocks, the wgmma wait's source line
with its four SASS rows and the gap rows between them, a source line with no SASS rows after it, and the exponentials'
loop with six SASS rows. The paths, the kernel's name and the source texts are replaced (the kit holds no line of the
reference); the source rows keep unescaped quotes, as ncu writes them.
"""
import io
import os
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stalls_by_line as sl  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "ncu_source_bwd.csv")


class StallsByLineTest(unittest.TestCase):
    def test_sums_the_sass_rows_of_each_source_line(self):
        lines, total = sl.read(FIXTURE)
        wait = lines[("hopper_bf16.cuh", 174)]
        self.assertEqual(wait["samples"], 10595 + 731 + 6578 + 59)  # the source row's own total is 17963
        self.assertEqual(lines[("flash_attention_bf16_backward_sm90.cu", 224)]["samples"], 3 + 515 + 106 + 75 + 124 + 265)
        self.assertEqual(lines[("hopper_bf16.cuh", 247)]["samples"], 0)
        self.assertEqual(total, 17963 + 1088)

    def test_reasons_opcodes_and_text(self):
        lines, _ = sl.read(FIXTURE)
        wait = lines[("hopper_bf16.cuh", 174)]
        self.assertEqual(wait["stalls"].most_common(1)[0][0], "barrier")
        self.assertEqual(set(wait["opcodes"]), {"WARPGROUP"})
        self.assertTrue(wait["text"].startswith('asm volatile("wait.for.the.tensor.cores'))
        loop = lines[("flash_attention_bf16_backward_sm90.cu", 224)]
        self.assertEqual(loop["opcodes"]["LDS"], 124 + 265)

    def test_report_orders_by_share(self):
        lines, total = sl.read(FIXTURE)
        text = sl.report(lines, total, 10).splitlines()
        self.assertEqual(text[0], "19,051 stall samples in all")
        self.assertIn("hopper_bf16.cuh:174", text[1])
        self.assertTrue(text[1].lstrip().startswith("94.3%"))
        self.assertIn("flash_attention_bf16_backward_sm90.cu:224", text[2])
        self.assertEqual(len(text), 3)  # the line without samples is left out

    def test_a_file_of_another_page_is_refused_with_a_reason(self):
        other = os.path.join(os.path.dirname(FIXTURE), "ncu_raw_task5.csv")
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            self.assertEqual(sl.main([other]), 1)
        self.assertIn("--page source --print-source cuda,sass", err.getvalue())


if __name__ == "__main__":
    unittest.main()
