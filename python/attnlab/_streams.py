"""Torch's current CUDA stream on a device, as the handle the bridge's calls take (0: the legacy default stream).

The task interfaces launch on the legacy default stream, torch's "default stream". python/bridge.cpp orders
each launch with the stream passed here in the same C call: when it is another stream (inside
`with torch.cuda.stream(s):`), the default stream first waits for everything queued on it, and it waits for the
default stream after the launch; stream-to-stream waits on an event, the host does not block. A stream being
captured into a CUDA graph is refused with an error rather than captured wrong.
"""
import torch

_raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # the handle alone, without a torch.cuda.Stream object


def current(device):
    """The cudaStream_t (an int) of torch's current stream on CUDA device index `device`."""
    if _raw is not None:
        return _raw(device)
    return torch.cuda.current_stream(device).cuda_stream
