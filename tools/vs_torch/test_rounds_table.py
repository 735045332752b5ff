#!/usr/bin/env python3
"""Tests of tools/vs_torch/rounds_table.py (run by tools/ci/run_tests.sh; no GPU, no torch).

The logs below are written in the four programs' formats (bench_task4_bf16 --grid, bench_task4_bf16_backward,
sdpa_bf16.py --grid, sdpa_bf16_backward.py), header lines included, with made-up figures.
"""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rounds_table as rt  # noqa: E402

FWD = """GPU: NVIDIA H100 80GB HBM3 (132 SMs, 50 MB L2)   ceilings measured now: copy 2971 GB/s, cuBLAS SGEMM {sgemm} TFLOP/s
FLOPs = 4·B·H·S²·D (halved when causal); timing: events, device synchronised, L2 flushed, median

B=16 H=16 S=1024 D=128   (tolerance |diff| <= 0.004 + 0.016*|want| against fp32 cuBLAS attention on the bf16 inputs)
  flash_attention_forward_bf16                     0.233 ms (min 0.232, n=10)  {a} TFLOP/s = 1146% of SGEMM    {a} TFLOP/s   rel L2 2.2e-03  ok

B=16 H=16 S=1024 D=128 causal   (tolerance |diff| <= 0.004 + 0.016*|want| against fp32 cuBLAS attention on the bf16 inputs)
  flash_attention_forward_bf16                     0.158 ms (min 0.157, n=10)  {b} TFLOP/s = 845% of SGEMM    {b} TFLOP/s   ok
"""
BWD = """GPU: NVIDIA H100 80GB HBM3 (132 SMs, 50 MB L2)   ceilings measured now: copy 2967 GB/s, cuBLAS SGEMM 51.6 TFLOP/s
flash_attention_backward_bf16: FLOPs = 2.5 x 4·B·H·S²·D (halved when causal); timing: events, median of 10 after 3
  B=16 H=16 S=1024 D=128                           0.863 ms (min 0.858, n=10)  {a} TFLOP/s = 772% of SGEMM   max|diff| 1.7e-03  ok
  B=16 H=16 S=1024 D=128 causal                    0.666 ms (min 0.664, n=10)  {b} TFLOP/s = 500% of SGEMM   max|diff| 2.1e-02  ok
"""
TORCH_FWD = """GPU: NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, cuDNN 91900
{fa4_note}

B=16 H=16 S=1024 D=128
  torch sdpa flash (FA2)     0.428 ms   {fa2} TFLOP/s   rel L2 2.2e-03
  torch sdpa cudnn           0.227 ms   {cudnn} TFLOP/s   rel L2 2.2e-03
  torch sdpa efficient       0.812 ms   169.3 TFLOP/s   rel L2 2.2e-03
{fa4_line}
B=16 H=16 S=1024 D=128 causal
  torch sdpa cudnn           0.157 ms   436.9 TFLOP/s   rel L2 2.0e-03
"""
TORCH_BWD = """GPU: NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, cuDNN 91900
FA4: flash-attn-4 timed beside them
backward TFLOP/s (2.5 x 4·B·H·S²·D, halved when causal); events, 256 MB L2 flush, median of 10 after 3
/opt/x/dsl.py:2300: UserWarning: Argument aux_data (position 17) cannot be converted | not a row
B=16 H=16 S=1024 D=128         cuDNN    0.974 ms  {cudnn} TFLOP/s  |  FA2    1.739 ms  197.6 TFLOP/s  |  FA4    0.986 ms  {fa4} TFLOP/s
B=16 H=16 S=1024 D=128 causal  cuDNN    0.708 ms  242.6 TFLOP/s  |  FA2    1.180 ms  145.6 TFLOP/s  |  FA4    0.742 ms  231.6 TFLOP/s
"""
S, SC = "B=16 H=16 S=1024 D=128", "B=16 H=16 S=1024 D=128 causal"


def write_round(root, r, fwd, bwd, cudnn_fwd, fa4_fwd, cudnn_bwd, fa4_bwd):
    d = os.path.join(root, f"r{r}")
    os.makedirs(d)
    files = {
        "fwd.log": FWD.format(sgemm=51.4, a=fwd, b=434.0),
        "bwd.log": BWD.format(a=bwd, b=257.9),
        "torch_fwd.log": TORCH_FWD.format(
            fa2=321.3, cudnn=cudnn_fwd,
            fa4_note="FA4: flash-attn-4 timed beside them" if fa4_fwd else "FA4: not installed here, not timed (ImportError: x)",
            fa4_line=f"  FA4 (CuTe)                0.380 ms   {fa4_fwd} TFLOP/s   rel L2 2.2e-03" if fa4_fwd else ""),
        "torch_bwd.log": TORCH_BWD.format(cudnn=cudnn_bwd, fa4=fa4_bwd),
    }
    for name, text in files.items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)


class RoundsTableTest(unittest.TestCase):
    def test_each_format_parses_to_its_sides(self):
        fwd = rt.parse_log(FWD.format(sgemm=51.4, a=588.8, b=434.0), "course")
        self.assertEqual(fwd, {(S, "course"): 588.8, (SC, "course"): 434.0})  # not SGEMM's 51.4 of the header
        bwd = rt.parse_log(BWD.format(a=398.3, b=257.9), "course")
        self.assertEqual(bwd, {(S, "course"): 398.3, (SC, "course"): 257.9})
        tf = rt.parse_log(TORCH_FWD.format(fa2=321.3, cudnn=606.2, fa4_note="", fa4_line="  FA4 (CuTe)   0.380 ms   362.1 TFLOP/s"),
                          "torch")
        self.assertEqual(tf, {(S, "FA2"): 321.3, (S, "cuDNN"): 606.2, (S, "FA4"): 362.1, (SC, "cuDNN"): 436.9})
        tb = rt.parse_log(TORCH_BWD.format(cudnn=352.9, fa4=348.6), "torch")
        self.assertEqual(tb[(S, "cuDNN")], 352.9)
        self.assertEqual(tb[(S, "FA2")], 197.6)
        self.assertEqual(tb[(S, "FA4")], 348.6)
        self.assertEqual(tb[(SC, "FA4")], 231.6)
        self.assertEqual(len(tb), 6)

    def test_medians_over_rounds_and_the_ratio_to_the_best_library(self):
        with tempfile.TemporaryDirectory() as root:
            write_round(root, 1, fwd=580.0, bwd=390.0, cudnn_fwd=600.0, fa4_fwd=360.0, cudnn_bwd=350.0, fa4_bwd=400.0)
            write_round(root, 2, fwd=590.0, bwd=398.0, cudnn_fwd=580.0, fa4_fwd=None, cudnn_bwd=360.0, fa4_bwd=380.0)
            write_round(root, 3, fwd=600.0, bwd=402.0, cudnn_fwd=590.0, fa4_fwd=370.0, cudnn_bwd=340.0, fa4_bwd=390.0)
            os.makedirs(os.path.join(root, "notes"))  # not a round: left alone
            data, shapes, n = rt.read_rounds(root)
        self.assertEqual(n, 3)
        self.assertEqual(shapes["forward"], [S, SC])
        self.assertEqual(data["forward"][(S, "course")], [580.0, 590.0, 600.0])
        self.assertEqual(data["forward"][(S, "FA4")], [360.0, 370.0])  # round 2 had no FA4
        self.assertIn("| 365.0 (360–370) n=2 |", rt.report(data, shapes, n, markdown=True))  # said, not hidden
        rows = {shape: (medians, ratio) for shape, _, medians, ratio in rt.table(data["forward"], shapes["forward"])}
        medians, ratio = rows[S]
        self.assertEqual(medians["course"], 590.0)
        self.assertEqual(medians["cuDNN"], 590.0)
        self.assertEqual(medians["FA4"], 365.0)
        self.assertAlmostEqual(ratio, 1.0)
        rows = {shape: (medians, ratio) for shape, _, medians, ratio in rt.table(data["backward"], shapes["backward"])}
        medians, ratio = rows[S]
        self.assertEqual(medians["course"], 398.0)
        self.assertEqual(medians["FA4"], 390.0)  # the best library's median, not its best round (400)
        self.assertAlmostEqual(ratio, 398.0 / 390.0)

    def test_the_first_line_says_how_each_side_timed(self):
        gpu_fwd = FWD.replace("timing: events, device synchronised, L2 flushed, median",
                              "timing: events, L2 flushed, median, GPU time only (the call's host work queued behind a GPU wait)")
        self.assertEqual(rt.timing_of(gpu_fwd), "GPU time only")
        self.assertEqual(rt.timing_of(FWD), "host work inside (device synchronised)")
        self.assertEqual(rt.timing_of(TORCH_BWD), "not said")
        with tempfile.TemporaryDirectory() as root:  # the fixture's sides: synchronised C++, torch not saying
            write_round(root, 1, fwd=580.0, bwd=390.0, cudnn_fwd=600.0, fa4_fwd=None, cudnn_bwd=350.0, fa4_bwd=400.0)
            line = rt.timing_line(rt.read_timings(root))
        self.assertIn("NOT THE SAME ON EVERY SIDE", line)
        self.assertIn("course: host work inside (device synchronised), not said", line)  # bwd.log's header says nothing
        self.assertEqual(rt.timing_line({"course": {"GPU time only"}, "torch": {"GPU time only"}}),
                         "timing: GPU time only on every side")

    def test_report_and_its_errors(self):
        with tempfile.TemporaryDirectory() as root:
            write_round(root, 1, fwd=580.0, bwd=390.0, cudnn_fwd=600.0, fa4_fwd=None, cudnn_bwd=350.0, fa4_bwd=400.0)
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(rt.main([root, "--markdown"]), 0)
            text = out.getvalue()
            self.assertIn("| B·H·S·D | course | cuDNN | FA2 | FA4 | course / best |", text)
            self.assertIn(f"| {S} | 580.0 | 600.0 | 321.3 | — | 0.967 |", text)
            empty = os.path.join(root, "r1", "none")
            os.makedirs(empty)
            err = io.StringIO()
            with redirect_stderr(err), self.assertRaises(SystemExit) as stop:
                rt.main([empty])
            self.assertIn("no round folders", str(stop.exception))
            with redirect_stderr(err):
                self.assertEqual(rt.main([os.path.join(root, "missing")]), 2)
            self.assertIn("not a folder", err.getvalue())


if __name__ == "__main__":
    unittest.main()
