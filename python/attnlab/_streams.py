"""Orders the bridge's kernels with torch's current CUDA stream.

The task interfaces launch on the legacy default stream (stream 0 of the device), torch's "default
stream". When torch's current stream is that one, nothing is needed: work is ordered as issued.
When it is another stream (inside `with torch.cuda.stream(s):`), the default stream first waits for
everything queued on the current stream (the inputs are ready), and after the launch the current
stream waits for the default stream (later work and frees on it see the outputs). Both waits are
stream-to-stream (events): the host does not block. A CUDA graph capture cannot include these
launches: that is refused with an error rather than captured wrong.
"""
import contextlib

import torch


@contextlib.contextmanager
def ordered_with_current_stream(device):
    capturing = getattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    if capturing():
        raise RuntimeError("attnlab: cannot run inside a CUDA graph capture: the kernels launch on the legacy "
                           "default stream, which a capture does not record")
    current = torch.cuda.current_stream(device)
    default = torch.cuda.default_stream(device)
    if current == default:
        yield
        return
    default.wait_stream(current)
    try:
        yield
    finally:  # also after a failed call: whatever it launched is ordered before the current stream's next work
        current.wait_stream(default)
