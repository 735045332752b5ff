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


def run(env, reps=3):
    rec = Recorder()
    flush = mock.Mock()
    flush.view.return_value.amax.side_effect = lambda: rec.calls.append("flush")  # a read of every line
    wait = mock.Mock()
    wait.zero_.side_effect = lambda: rec.calls.append("wait")
    cuda = mock.Mock(spec=["Event", "synchronize"])
    cuda.Event.side_effect = rec.event
    cuda.synchronize.side_effect = lambda: rec.calls.append("sync")
    empty = mock.Mock(return_value=wait)
    with mock.patch.dict(os.environ, env, clear=False), mock.patch.object(et.torch, "cuda", cuda), \
            mock.patch.object(et.torch, "empty", empty), mock.patch.object(et, "_wait", None):
        ms = et.time_ms(lambda: rec.calls.append("call"), flush, warmup=1, reps=reps)
        words = et.timing_words()
    flush.zero_.assert_not_called()  # a flush by writing left dirty lines for the call to write back (common/cuda/read_stream.h)
    flush.view.assert_called_with(et.torch.int32)
    return rec.calls, ms, words, empty


class EventTimingTest(unittest.TestCase):
    def test_the_gpu_is_kept_busy_then_flushes_then_starts(self):
        calls, ms, words, empty = run({"ATTNLAB_TIMING_HIDE_HOST": "1"})
        one = ["wait", "flush", "start", "call", "stop", "sync"]
        self.assertEqual(calls, ["call"] + one * 3)  # a warm-up, then three timed repetitions
        self.assertEqual(ms, 1.0)  # the median of 0, 1, 2
        self.assertIn("GPU time only", words)
        empty.assert_called_once()  # the wait's buffer is made once, not per repetition
        self.assertEqual(empty.call_args.args[0], et.WAIT_BYTES)

    def test_the_old_way_on_request(self):
        calls, _, words, empty = run({"ATTNLAB_TIMING_HIDE_HOST": "0"})
        self.assertEqual(calls[1:7], ["flush", "start", "call", "stop", "sync", "flush"])
        self.assertIn("ATTNLAB_TIMING_HIDE_HOST=0", words)
        empty.assert_not_called()


if __name__ == "__main__":
    unittest.main()
