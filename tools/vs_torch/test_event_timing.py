#!/usr/bin/env python3
"""Tests of tools/vs_torch/event_timing.py (run by tools/ci/run_tests.sh; no GPU: torch.cuda's calls are recorded by
stand-ins, so that what is checked is the order in which a timed repetition queues its work)."""
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import event_timing as et  # noqa: E402


class Recorder:
    def __init__(self):
        self.calls, self.events = [], 0

    def event(self, enable_timing):
        rec, n = self, self.events
        self.events += 1

        class Event:
            def record(self):
                rec.calls.append("start" if n % 2 == 0 else "stop")

            def elapsed_time(self, other):
                return float(n // 2)  # repetition r times r ms

        return Event()


def run(env, has_sleep=True, reps=3):
    rec = Recorder()
    flush = mock.Mock()
    flush.zero_.side_effect = lambda: rec.calls.append("flush")
    cuda = mock.Mock(spec=["Event", "synchronize"] + (["_sleep"] if has_sleep else []))
    cuda.Event.side_effect = rec.event
    cuda.synchronize.side_effect = lambda: rec.calls.append("sync")
    if has_sleep:
        cuda._sleep.side_effect = lambda cycles: rec.calls.append(f"sleep {cycles}")
    with mock.patch.dict(os.environ, env, clear=False), mock.patch.object(et.torch, "cuda", cuda):
        ms = et.time_ms(lambda: rec.calls.append("call"), flush, warmup=1, reps=reps)
        words = et.timing_words()
    return rec.calls, ms, words


class EventTimingTest(unittest.TestCase):
    def test_the_gpu_waits_between_the_flush_and_the_start_event(self):
        calls, ms, words = run({"ATTNLAB_TIMING_HIDE_HOST": "1"})
        one = ["flush", f"sleep {et.SLEEP_CYCLES}", "start", "call", "stop", "sync"]
        self.assertEqual(calls, ["call"] + one * 3)  # a warm-up, then three timed repetitions
        self.assertEqual(ms, 1.0)  # the median of 0, 1, 2
        self.assertIn("GPU time only", words)

    def test_the_old_way_on_request(self):
        calls, _, words = run({"ATTNLAB_TIMING_HIDE_HOST": "0"})
        self.assertEqual(calls[1:7], ["flush", "start", "call", "stop", "sync", "flush"])
        self.assertIn("ATTNLAB_TIMING_HIDE_HOST=0", words)

    def test_a_torch_without_sleep_says_so(self):
        calls, _, words = run({"ATTNLAB_TIMING_HIDE_HOST": "1"}, has_sleep=False)
        self.assertNotIn(f"sleep {et.SLEEP_CYCLES}", calls)
        self.assertIn("no torch.cuda._sleep", words)


if __name__ == "__main__":
    unittest.main()
