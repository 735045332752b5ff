"""Host time and event time of attention forward+backward through the bridge, beside SDPA's backends."""
import os, sys, time, statistics
ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "tools", "vs_torch")); sys.path.insert(0, os.path.join(ROOT, "python"))
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from event_timing import time_ms
import attnlab
print(torch.cuda.get_device_name(), torch.__version__, attnlab.library_path())
BK = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
def fwd(name, q, k, v):
    if name == "attnlab": return attnlab.attention(q, k, v, causal=True)
    if name == "attnlab-op": return torch.ops.attnlab.attention(q, k, v, True)
    with sdpa_kernel(BK[name]): return F.scaled_dot_product_attention(q, k, v, is_causal=True)
def host_us(fn, calls=300, warm=30):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(calls):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize(); return 1e6 * statistics.median(ts)
NAMES = ("attnlab", "attnlab-op", "flash", "cudnn")
for shape in [(1, 1, 64, 64), (2, 6, 4096, 64)]:
    q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    do = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
    for name in NAMES:
        print(f"host {shape} {name:10s} forward with grad {host_us(lambda: fwd(name, q, k, v)):7.1f} us, "
              f"forward+backward {host_us(lambda: fwd(name, q, k, v).backward(do)):7.1f} us")
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
for shape in [(2, 6, 4096, 64), (4, 16, 4096, 128)]:
    B, H, S, D = shape
    fl = 4 * B * H * S * S * D * 0.5
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v, do = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(4))
    for name in NAMES:
        qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
        tf = time_ms(lambda: fwd(name, qr, kr, vr), flush, 3, 20)
        o = fwd(name, qr, kr, vr)
        tb = time_ms(lambda: torch.autograd.grad(o, (qr, kr, vr), do, retain_graph=True), flush, 3, 20)
        print(f"events {shape} causal {name:10s} forward (with grad) {tf*1e3:7.1f} us {fl/tf/1e9:6.1f} TFLOP/s; "
              f"backward {tb*1e3:7.1f} us {2.5*fl/tb/1e9:6.1f} TFLOP/s")
